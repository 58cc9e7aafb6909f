package sim

import (
	"fmt"
	"slices"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// Stream attributes, stream ids, capture dependencies, records with flags and profiler
// control. The simulator has no L2 cache: an access-policy window is checked as the runtime
// checks it and stored, and resetting the persisting lines only counts.

// The L2 persisting-cache limits the simulated device reports (an H100's figures).
const (
	simMaxPersistingL2 = 39321600  // three quarters of the 50 MiB L2
	simMaxPolicyWindow = 134213632 // 128 MiB less 4 KiB
)

// streamAttrs is what cudaStreamSetAttribute stores on a stream (guarded by stream.mu).
type streamAttrs struct {
	window     backend.AccessPolicyWindow
	syncPolicy backend.SyncPolicy // 0: never set, reported as SyncAuto
}

// addStreamControlAttrs adds the device attributes of the persisting L2 cache.
func addStreamControlAttrs(a map[backend.Attr]int) {
	a[backend.AttrMaxPersistingL2CacheSize] = simMaxPersistingL2
	a[backend.AttrMaxAccessPolicyWindowSize] = simMaxPolicyWindow
}

// StreamGetAttribute reads attribute attr of stream h.
func (d *device) StreamGetAttribute(h backend.Stream, attr backend.StreamAttr) (backend.StreamAttrValue, error) {
	const op = "cudaStreamGetAttribute"
	s, err := d.liveStream(op, h)
	if err != nil {
		return backend.StreamAttrValue{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var v backend.StreamAttrValue
	switch attr {
	case backend.StreamAttrAccessPolicyWindow:
		v.Window = s.attrs.window
	case backend.StreamAttrSyncPolicy:
		v.SyncPolicy = max(s.attrs.syncPolicy, backend.SyncAuto)
	case backend.StreamAttrPriority:
		v.Priority = int32(s.priority)
	default:
		return v, d.fail(op, cudaerr.InvalidValue, "stream attribute %d is not a stream attribute", int32(attr))
	}
	return v, nil
}

// StreamSetAttribute sets attribute attr of stream h, refusing what the runtime refuses. A
// priority outside the device's range is clamped into it, as at creation.
func (d *device) StreamSetAttribute(h backend.Stream, attr backend.StreamAttr, v backend.StreamAttrValue) error {
	const op = "cudaStreamSetAttribute"
	s, err := d.liveStream(op, h)
	if err != nil {
		return err
	}
	switch attr {
	case backend.StreamAttrAccessPolicyWindow:
		if err := checkWindow(v.Window); err != nil {
			return d.fail(op, cudaerr.InvalidValue, "%v", err)
		}
	case backend.StreamAttrSyncPolicy:
		if v.SyncPolicy < backend.SyncAuto || v.SyncPolicy > backend.SyncBlockingSync {
			return d.fail(op, cudaerr.InvalidValue, "unknown synchronization policy %d", int32(v.SyncPolicy))
		}
	case backend.StreamAttrPriority:
	default:
		return d.fail(op, cudaerr.InvalidValue, "stream attribute %d is not a stream attribute", int32(attr))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch attr {
	case backend.StreamAttrAccessPolicyWindow:
		s.attrs.window = v.Window
	case backend.StreamAttrSyncPolicy:
		s.attrs.syncPolicy = v.SyncPolicy
	default:
		s.priority = min(max(int(v.Priority), greatestPriority), leastPriority)
	}
	return nil
}

// checkWindow is the runtime's check of an access-policy window.
func checkWindow(w backend.AccessPolicyWindow) error {
	switch {
	case w.NumBytes > simMaxPolicyWindow:
		return fmt.Errorf("access policy window of %d bytes exceeds the device's maximum of %d", w.NumBytes, simMaxPolicyWindow)
	case !(w.HitRatio >= 0 && w.HitRatio <= 1):
		return fmt.Errorf("hit ratio %v is outside [0, 1]", w.HitRatio)
	case w.HitProp < backend.AccessNormal || w.HitProp > backend.AccessPersisting:
		return fmt.Errorf("unknown hit access property %d", int32(w.HitProp))
	case w.MissProp != backend.AccessNormal && w.MissProp != backend.AccessStreaming:
		return fmt.Errorf("miss access property %d: want normal or streaming", int32(w.MissProp))
	}
	return nil
}

// StreamCopyAttributes copies src's attributes (window, synchronization policy, priority) to
// dst; both must be of the same device.
func (d *device) StreamCopyAttributes(dst, src backend.Stream) error {
	const op = "cudaStreamCopyAttributes"
	ds, err := d.liveStream(op, dst)
	if err != nil {
		return err
	}
	ss, err := d.liveStream(op, src)
	if err != nil {
		return err
	}
	if ds.dev != ss.dev {
		return d.fail(op, cudaerr.InvalidResourceHandle, "stream %#x is of device %d, stream %#x of device %d",
			uintptr(dst), ds.dev.ordinal, uintptr(src), ss.dev.ordinal)
	}
	if ds == ss {
		return nil
	}
	ss.mu.Lock()
	a, p := ss.attrs, ss.priority
	ss.mu.Unlock()
	ds.mu.Lock()
	ds.attrs, ds.priority = a, p
	ds.mu.Unlock()
	return nil
}

// StreamGetID is h's id: its handle, unique in the backend as an id is in a context.
func (d *device) StreamGetID(h backend.Stream) (uint64, error) {
	s, err := d.liveStream("cudaStreamGetId", h)
	if err != nil {
		return 0, err
	}
	return uint64(s.h), nil
}

// ResetPersistingL2Cache counts the reset: there are no cache lines to demote.
func (d *device) ResetPersistingL2Cache() error {
	if err := d.alive("cudaCtxResetPersistingL2Cache"); err != nil {
		return err
	}
	d.l2Resets.Add(1)
	return nil
}

// StreamUpdateCaptureDependencies adds to or replaces the tail of h in its capture. Every
// node must be a node of the capture's graph.
func (d *device) StreamUpdateCaptureDependencies(h backend.Stream, deps []backend.GraphNode, flags uint32) error {
	const op = "cudaStreamUpdateCaptureDependencies"
	if err := d.alive(op); err != nil {
		return err
	}
	s, err := d.stream(op, h)
	if err != nil {
		return err
	}
	if flags != backend.CaptureDepsAdd && flags != backend.CaptureDepsSet {
		return d.fail(op, cudaerr.InvalidValue, "unknown flags %#x", flags)
	}
	gs := &d.graphs
	gs.mu.Lock()
	defer gs.mu.Unlock()
	gs.init()
	c := gs.captures[s]
	if c == nil {
		return d.fail(op, cudaerr.IllegalState, "stream %#x is not capturing", uintptr(h))
	}
	nodes := make([]*snode, 0, len(deps))
	for _, nh := range deps {
		n := gs.nodes[nh]
		if n == nil || !slices.Contains(c.graph.nodes, n) {
			return d.fail(op, cudaerr.InvalidValue, "node %#x is not a node of the stream's capture", uintptr(nh))
		}
		if !slices.Contains(nodes, n) {
			nodes = append(nodes, n)
		}
	}
	if flags == backend.CaptureDepsSet {
		c.tails[s] = nodes
		return nil
	}
	for _, n := range nodes {
		if !slices.Contains(c.tails[s], n) {
			c.tails[s] = append(c.tails[s], n)
		}
	}
	return nil
}

// EventRecordWithFlags records e on s. An external record in a capture becomes an event
// record node; outside a capture, and without the flag, it is an ordinary record.
func (d *device) EventRecordWithFlags(h backend.Event, sh backend.Stream, flags uint32) error {
	const op = "cudaEventRecordWithFlags"
	if flags&^backend.EventRecordExternal != 0 {
		return d.fail(op, cudaerr.InvalidValue, "unknown event record flags %#x", flags)
	}
	if flags == backend.EventRecordDefault {
		return d.EventRecord(h, sh)
	}
	if err := d.alive(op); err != nil {
		return err
	}
	e, err := d.event(op, h)
	if err != nil {
		return err
	}
	s, err := d.ownStream(op, sh)
	if err != nil {
		return err
	}
	if d.captureNode(s, func() *snode {
		return &snode{typ: backend.NodeEventRecord, label: fmt.Sprintf("record event %#x", uintptr(h)), ev: e}
	}) {
		return nil
	}
	// As the runtime does: the external flag means something only in a capture.
	return d.fail(op, cudaerr.IllegalState, "cudaEventRecordExternal on a stream that is not capturing")
}

// StreamIsCapturing is the status StreamCaptureInfo reports, asked as cudaStreamIsCapturing.
func (d *device) StreamIsCapturing(h backend.Stream) (backend.CaptureStatus, error) {
	if _, err := d.stream("cudaStreamIsCapturing", h); err != nil {
		return 0, err
	}
	info, err := d.StreamCaptureInfo(h)
	return info.Status, err
}

// ProfilerStart counts a start: no profiler attaches to the simulator.
func (d *device) ProfilerStart() error {
	if err := d.alive("cudaProfilerStart"); err != nil {
		return err
	}
	d.profiling.Store(true)
	return nil
}

// ProfilerStop ends what ProfilerStart began.
func (d *device) ProfilerStop() error {
	if err := d.alive("cudaProfilerStop"); err != nil {
		return err
	}
	d.profiling.Store(false)
	return nil
}

var _ backend.StreamControl = (*device)(nil)
