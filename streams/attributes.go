package streams

import (
	"context"
	"fmt"
	"math"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
)

// SyncPolicy is how a host thread waits for the stream's work (cudaSynchronizationPolicy).
// gpuactor's own waits poll and never block in the runtime, so the policy matters to other
// libraries that synchronize the stream through its Handle.
type SyncPolicy int32

// Synchronization policies.
const (
	SyncAuto     SyncPolicy = SyncPolicy(backend.SyncAuto)         // the runtime chooses
	SyncSpin     SyncPolicy = SyncPolicy(backend.SyncSpin)         // spin on the CPU
	SyncYield    SyncPolicy = SyncPolicy(backend.SyncYield)        // yield the CPU while waiting
	SyncBlocking SyncPolicy = SyncPolicy(backend.SyncBlockingSync) // block on a synchronization primitive
)

// String names the policy.
func (p SyncPolicy) String() string {
	switch p {
	case SyncAuto:
		return "auto"
	case SyncSpin:
		return "spin"
	case SyncYield:
		return "yield"
	case SyncBlocking:
		return "blocking"
	}
	return fmt.Sprintf("SyncPolicy(%d)", int32(p))
}

// AccessProperty is how the L2 cache treats accesses in an access-policy window
// (cudaAccessProperty).
type AccessProperty int32

// Access properties.
const (
	AccessNormal     AccessProperty = AccessProperty(backend.AccessNormal)
	AccessStreaming  AccessProperty = AccessProperty(backend.AccessStreaming)  // less likely to stay in L2
	AccessPersisting AccessProperty = AccessProperty(backend.AccessPersisting) // more likely to stay in L2
)

// AccessPolicy asks the L2 cache to keep the lines of Window (a buffer or a slice of one, on
// the stream's device) persisting: of the window's lines, the fraction HitRatio gets Hit and
// the rest Miss. Persisting lines use the set-aside part of the L2 cache (device limit
// cudaLimitPersistingL2CacheSize).
type AccessPolicy struct {
	Window   device.Mem
	HitRatio float32        // in [0, 1]
	Hit      AccessProperty // usually AccessPersisting
	Miss     AccessProperty // AccessNormal or AccessStreaming
}

// AccessPolicyWindow is a stream's access-policy window as the runtime reports it: Bytes bytes
// from Base (0 bytes: no window).
type AccessPolicyWindow struct {
	Base     cuda.DevicePtr
	Bytes    uint64
	HitRatio float32
	Hit      AccessProperty
	Miss     AccessProperty
}

// SetAccessPolicy sets the stream's L2 access-policy window (cudaStreamSetAttribute with
// cudaStreamAttributeAccessPolicyWindow) for the kernels queued on it afterwards; it returns
// once the runtime has taken it. A window larger than the device's maximum
// (cudaDevAttrMaxAccessPolicyWindowSize), a hit ratio outside [0, 1] or a persisting Miss is
// an ErrInvalidArgument error naming the value and the limit.
func (s *Stream) SetAccessPolicy(ctx context.Context, p AccessPolicy) error {
	switch {
	case s == nil:
		return core.Invalid("SetAccessPolicy of a nil stream")
	case p.Window == nil:
		return core.Invalid("SetAccessPolicy with no Window: ClearAccessPolicy removes the window")
	case !(p.HitRatio >= 0 && p.HitRatio <= 1):
		return core.Invalid("SetAccessPolicy: hit ratio %v outside [0, 1]", p.HitRatio)
	case p.Hit < AccessNormal || p.Hit > AccessPersisting:
		return core.Invalid("SetAccessPolicy: unknown hit property %d", int32(p.Hit))
	case p.Miss != AccessNormal && p.Miss != AccessStreaming:
		return core.Invalid("SetAccessPolicy: miss property %d, want AccessNormal or AccessStreaming", int32(p.Miss))
	}
	owner, err := core.Owner("SetAccessPolicy window", p.Window)
	if err != nil {
		return err
	}
	if owner != s.core().Device() {
		return core.WrongDevice("window", owner, s.core().Device())
	}
	b, off, n := core.Region(p.Window)
	base, err := b.DevicePtr(ctx)
	if err != nil {
		return err
	}
	w := backend.AccessPolicyWindow{Base: base + cuda.DevicePtr(off), NumBytes: n, HitRatio: p.HitRatio,
		HitProp: backend.AccessProperty(p.Hit), MissProp: backend.AccessProperty(p.Miss)}
	return s.setWindow(ctx, w)
}

// ClearAccessPolicy removes the stream's access-policy window; it returns once the runtime
// has done so.
func (s *Stream) ClearAccessPolicy(ctx context.Context) error {
	return s.setWindow(ctx, backend.AccessPolicyWindow{})
}

func (s *Stream) setWindow(ctx context.Context, w backend.AccessPolicyWindow) error {
	_, err := core.RunOn(ctx, s.core(), func(rt backend.Device, _ *core.Tracker, h backend.Stream) (struct{}, error) {
		if w.NumBytes > 0 {
			limit, err := rt.Attribute(backend.AttrMaxAccessPolicyWindowSize)
			if err != nil {
				return struct{}{}, err
			}
			if w.NumBytes > uint64(limit) {
				return struct{}{}, core.Invalid("SetAccessPolicy: a window of %d bytes exceeds the device's maximum of %d (cudaDevAttrMaxAccessPolicyWindowSize)", w.NumBytes, limit)
			}
		}
		return struct{}{}, rt.StreamSetAttribute(h, backend.StreamAttrAccessPolicyWindow, backend.StreamAttrValue{Window: w})
	}).Await(ctx)
	return err
}

// AccessPolicy is the stream's access-policy window (cudaStreamGetAttribute); it returns once
// the runtime has answered.
func (s *Stream) AccessPolicy(ctx context.Context) (AccessPolicyWindow, error) {
	v, err := s.attribute(ctx, backend.StreamAttrAccessPolicyWindow)
	w := v.Window
	return AccessPolicyWindow{Base: w.Base, Bytes: w.NumBytes, HitRatio: w.HitRatio,
		Hit: AccessProperty(w.HitProp), Miss: AccessProperty(w.MissProp)}, err
}

// SetSyncPolicy sets how host threads wait for the stream (cudaStreamAttributeSynchronizationPolicy);
// it returns once the runtime has taken it.
func (s *Stream) SetSyncPolicy(ctx context.Context, p SyncPolicy) error {
	if s == nil {
		return core.Invalid("SetSyncPolicy of a nil stream")
	}
	if p < SyncAuto || p > SyncBlocking {
		return core.Invalid("SetSyncPolicy: unknown policy %d, want SyncAuto to SyncBlocking", int32(p))
	}
	_, err := core.RunOn(ctx, s.core(), func(rt backend.Device, _ *core.Tracker, h backend.Stream) (struct{}, error) {
		return struct{}{}, rt.StreamSetAttribute(h, backend.StreamAttrSyncPolicy, backend.StreamAttrValue{SyncPolicy: backend.SyncPolicy(p)})
	}).Await(ctx)
	return err
}

// SyncPolicy is the stream's synchronization policy, as the runtime reports it.
func (s *Stream) SyncPolicy(ctx context.Context) (SyncPolicy, error) {
	v, err := s.attribute(ctx, backend.StreamAttrSyncPolicy)
	return SyncPolicy(v.SyncPolicy), err
}

// SetPriority changes the stream's priority (cudaStreamAttributePriority, CUDA 12.0+) for the
// work queued afterwards; it returns once the runtime has taken it. A priority outside the
// device's PriorityRange is an ErrInvalidArgument error naming the range.
func (s *Stream) SetPriority(ctx context.Context, p int) error {
	if p < math.MinInt32 || p > math.MaxInt32 {
		return core.Invalid("SetPriority(%d): not a priority", p)
	}
	return s.core().SetPriority(ctx, p)
}

// CopyAttributesFrom gives the stream src's attributes (cudaStreamCopyAttributes): its
// access-policy window and synchronization policy, and its priority where the runtime copies
// it (Priority reports the runtime's answer afterwards). Both streams must be of one device;
// it returns once the runtime has copied them.
func (s *Stream) CopyAttributesFrom(ctx context.Context, src *Stream) error {
	if src == nil {
		return core.Invalid("CopyAttributesFrom a nil stream")
	}
	return s.core().CopyAttributes(ctx, src.core())
}

// ID is the stream's unique id in its device's context (cudaStreamGetId, CUDA 12.0+), the id
// profilers such as Nsight Systems show for it.
func (s *Stream) ID(ctx context.Context) (uint64, error) {
	return core.RunOn(ctx, s.core(), func(rt backend.Device, _ *core.Tracker, h backend.Stream) (uint64, error) {
		return rt.StreamGetID(h)
	}).Await(ctx)
}

func (s *Stream) attribute(ctx context.Context, a backend.StreamAttr) (backend.StreamAttrValue, error) {
	return core.RunOn(ctx, s.core(), func(rt backend.Device, _ *core.Tracker, h backend.Stream) (backend.StreamAttrValue, error) {
		return rt.StreamGetAttribute(h, a)
	}).Await(ctx)
}

// RecordExternal queues a record of e on the stream with cudaEventRecordExternal: in a
// capture it becomes an event record node of the graph, so that every replay records e (a
// plain Record in a capture only marks a fork or join point); outside a capture it is an
// ordinary record. The future completes when the GPU reaches it.
func (s *Stream) RecordExternal(ctx context.Context, e *Event) *Future {
	if e == nil {
		return failed(core.Invalid("RecordExternal of a nil event"))
	}
	ce, cs := e.core(), s.core()
	if ce.Device() != cs.Device() {
		return failed(core.WrongDevice("event", ce.Device(), cs.Device()))
	}
	return ce.RecordWithFlags(ctx, cs, backend.EventRecordExternal)
}
