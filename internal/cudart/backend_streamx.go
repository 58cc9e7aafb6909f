package cudart

import "github.com/gpuactor/gpuactor/internal/backend"

func (d *device) StreamGetAttribute(s Stream, attr backend.StreamAttr) (backend.StreamAttrValue, error) {
	return d.rt.StreamGetAttribute(s, attr)
}

func (d *device) StreamSetAttribute(s Stream, attr backend.StreamAttr, v backend.StreamAttrValue) error {
	return d.rt.StreamSetAttribute(s, attr, v)
}

func (d *device) StreamCopyAttributes(dst, src Stream) error {
	return d.rt.StreamCopyAttributes(dst, src)
}

func (d *device) StreamGetID(s Stream) (uint64, error) { return d.rt.StreamGetID(s) }
func (d *device) ResetPersistingL2Cache() error        { return d.rt.CtxResetPersistingL2Cache() }

func (d *device) StreamUpdateCaptureDependencies(s Stream, deps []backend.GraphNode, flags uint32) error {
	return d.rt.StreamUpdateCaptureDependencies(s, deps, flags)
}

func (d *device) EventRecordWithFlags(e Event, s Stream, flags uint32) error {
	return d.rt.EventRecordWithFlags(e, s, flags)
}

func (d *device) StreamIsCapturing(s Stream) (backend.CaptureStatus, error) {
	return d.rt.StreamIsCapturing(s)
}

func (d *device) ProfilerStart() error { return d.rt.ProfilerStart() }
func (d *device) ProfilerStop() error  { return d.rt.ProfilerStop() }

var _ backend.StreamControl = (*device)(nil)
