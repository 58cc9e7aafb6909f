package cudart

import (
	"math"
	"unsafe"

	"github.com/gpuactor/gpuactor/internal/backend"
)

// attrValue is a cudaStreamAttrValue: a 64-byte union since 12.0 (32 bytes in 11.x, so the
// runtime of either writes inside it). The offsets are those of the 13.0 header's
// cudaAccessPolicyWindow (base_ptr 0, num_bytes 8, hitRatio 16, hitProp 20, missProp 24);
// syncPolicy and priority are an int at offset 0.
type attrValue [64]byte

func (v *attrValue) u32(off int) uint32 { return *(*uint32)(unsafe.Pointer(&v[off])) }
func (v *attrValue) u64(off int) uint64 { return *(*uint64)(unsafe.Pointer(&v[off])) }
func (v *attrValue) put32(off int, x uint32) {
	*(*uint32)(unsafe.Pointer(&v[off])) = x
}
func (v *attrValue) put64(off int, x uint64) {
	*(*uint64)(unsafe.Pointer(&v[off])) = x
}

// encode lays out the field of x that attr names.
func (v *attrValue) encode(attr backend.StreamAttr, x backend.StreamAttrValue) {
	switch attr {
	case backend.StreamAttrAccessPolicyWindow:
		w := x.Window
		v.put64(0, uint64(w.Base))
		v.put64(8, w.NumBytes)
		v.put32(16, math.Float32bits(w.HitRatio))
		v.put32(20, uint32(w.HitProp))
		v.put32(24, uint32(w.MissProp))
	case backend.StreamAttrSyncPolicy:
		v.put32(0, uint32(x.SyncPolicy))
	default:
		v.put32(0, uint32(x.Priority))
	}
}

// decode reads the field attr names.
func (v *attrValue) decode(attr backend.StreamAttr) backend.StreamAttrValue {
	var x backend.StreamAttrValue
	switch attr {
	case backend.StreamAttrAccessPolicyWindow:
		x.Window = backend.AccessPolicyWindow{
			Base:     DevicePtr(v.u64(0)),
			NumBytes: v.u64(8),
			HitRatio: math.Float32frombits(v.u32(16)),
			HitProp:  backend.AccessProperty(v.u32(20)),
			MissProp: backend.AccessProperty(v.u32(24)),
		}
	case backend.StreamAttrSyncPolicy:
		x.SyncPolicy = backend.SyncPolicy(v.u32(0))
	default:
		x.Priority = int32(v.u32(0))
	}
	return x
}

// StreamGetAttribute reads one attribute of s (cudaStreamGetAttribute).
func (r *Runtime) StreamGetAttribute(s Stream, attr backend.StreamAttr) (backend.StreamAttrValue, error) {
	var v attrValue
	if err := r.call(fnStreamGetAttribute, uintptr(s), uintptr(attr), uintptr(unsafe.Pointer(&v))); err != nil {
		return backend.StreamAttrValue{}, err
	}
	return v.decode(attr), nil
}

// StreamSetAttribute sets one attribute of s (cudaStreamSetAttribute).
func (r *Runtime) StreamSetAttribute(s Stream, attr backend.StreamAttr, x backend.StreamAttrValue) error {
	var v attrValue
	v.encode(attr, x)
	return r.call(fnStreamSetAttribute, uintptr(s), uintptr(attr), uintptr(unsafe.Pointer(&v)))
}

// StreamCopyAttributes copies src's attributes to dst (cudaStreamCopyAttributes).
func (r *Runtime) StreamCopyAttributes(dst, src Stream) error {
	return r.call(fnStreamCopyAttributes, uintptr(dst), uintptr(src))
}

// StreamGetID is s's id (cudaStreamGetId, 12.0+).
func (r *Runtime) StreamGetID(s Stream) (uint64, error) {
	var id uint64
	err := r.call(fnStreamGetId, uintptr(s), uintptr(unsafe.Pointer(&id)))
	return id, err
}

// CtxResetPersistingL2Cache demotes the persisting L2 lines of the current context.
func (r *Runtime) CtxResetPersistingL2Cache() error { return r.call(fnCtxResetPersistingL2Cache) }

// StreamUpdateCaptureDependencies changes the nodes the next op captured on s depends on:
// cudaStreamUpdateCaptureDependencies, which 13.0 gave the 12.3 _v2 signature (an edge-data
// array after the nodes, NULL for plain edges); 11.3–12.x take (stream, nodes, n, flags).
func (r *Runtime) StreamUpdateCaptureDependencies(s Stream, deps []backend.GraphNode, flags uint32) error {
	var p uintptr
	if len(deps) > 0 {
		p = uintptr(unsafe.Pointer(&deps[0]))
	}
	if r.major >= 13 {
		return r.call(fnStreamUpdateCaptureDependencies, uintptr(s), p, 0, uintptr(len(deps)), uintptr(flags))
	}
	return r.call(fnStreamUpdateCaptureDependencies, uintptr(s), p, uintptr(len(deps)), uintptr(flags))
}

// EventRecordWithFlags records e on s with flags (cudaEventRecordWithFlags).
func (r *Runtime) EventRecordWithFlags(e Event, s Stream, flags uint32) error {
	return r.call(fnEventRecordWithFlags, uintptr(e), uintptr(s), uintptr(flags))
}

// StreamIsCapturing is s's capture status (cudaStreamIsCapturing, the same in 11.x to 13.0).
func (r *Runtime) StreamIsCapturing(s Stream) (backend.CaptureStatus, error) {
	var st int32
	err := r.call(fnStreamIsCapturing, uintptr(s), uintptr(unsafe.Pointer(&st)))
	return backend.CaptureStatus(st), err
}
