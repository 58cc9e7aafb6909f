package alloc

import (
	"context"
	"unsafe"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
	"github.com/gpuactor/gpuactor/streams"
)

// Advice is a hint about how managed memory is used.
type Advice int32

// Advice values (cudaMemoryAdvise).
const (
	SetReadMostly          = Advice(backend.AdviseSetReadMostly)
	UnsetReadMostly        = Advice(backend.AdviseUnsetReadMostly)
	SetPreferredLocation   = Advice(backend.AdviseSetPreferredLocation)
	UnsetPreferredLocation = Advice(backend.AdviseUnsetPreferredLocation)
	SetAccessedBy          = Advice(backend.AdviseSetAccessedBy)
	UnsetAccessedBy        = Advice(backend.AdviseUnsetAccessedBy)
)

// RangeAttributes is what the driver reports of managed memory: each attribute as it holds
// for every page of the range asked about.
type RangeAttributes struct {
	ReadMostly bool
	// PreferredLocation is unset when none was advised, or when the pages differ.
	PreferredLocation Location
	// LastPrefetchLocation is the last place every page was prefetched to (asked for: the
	// migration may not have happened yet); unset before any prefetch, or when they differ.
	LastPrefetchLocation Location
	// AccessedBy is the devices (or the host) advised with SetAccessedBy for every page.
	AccessedBy []Location
}

// maxAccessedBy is how many accessed-by entries a query has room for: one per device and the
// host, far past any machine.
const maxAccessedBy = 64

// span is elements [first, first+count) of m as a byte offset and length, checked.
func (m *Managed[T]) span(what string, first, count int) (off, n uint64, err error) {
	if m == nil || m.Buffer == nil {
		return 0, 0, core.Invalid("%s on a nil managed buffer", what)
	}
	if first < 0 || count < 1 || first > m.n || count > m.n-first {
		return 0, 0, core.OutOfRange("%s of elements [%d, %d+%d) of a %d-element managed buffer", what, first, first, count, m.n)
	}
	var zero T
	size := uint64(unsafe.Sizeof(zero))
	return uint64(first) * size, uint64(count) * size, nil
}

// PrefetchRange queues the migration of elements [first, first+count) to loc on s (a stream
// of the memory's device), cudaMemPrefetchAsync; the future completes when the GPU reaches
// it. The driver moves whole pages: those holding the elements.
func (m *Managed[T]) PrefetchRange(ctx context.Context, s *streams.Stream, first, count int, loc Location) *streams.Future {
	off, n, err := m.span("PrefetchRange", first, count)
	if err != nil {
		return failed(err)
	}
	l, err := loc.backend()
	if err != nil {
		return failed(err)
	}
	return m.onStream(ctx, s, func(rt backend.Device, h backend.Stream, p cuda.DevicePtr, _ uint64) error {
		return rt.MemPrefetch(p+cuda.DevicePtr(off), n, l, h)
	})
}

// Advise gives advice about the whole allocation; see AdviseRange.
func (m *Managed[T]) Advise(ctx context.Context, advice Advice, loc Location) error {
	return m.AdviseRange(ctx, 0, m.Len(), advice, loc)
}

// AdviseRange gives advice about elements [first, first+count) (cudaMemAdvise; the driver
// applies it to the pages holding them), and returns once it is given. loc is the location
// the advice names: SetPreferredLocation takes any, SetAccessedBy and UnsetAccessedBy a device
// or Host(); the read-mostly advice and UnsetPreferredLocation ignore it.
func (m *Managed[T]) AdviseRange(ctx context.Context, first, count int, advice Advice, loc Location) error {
	off, n, err := m.span("AdviseRange", first, count)
	if err != nil {
		return err
	}
	if advice < SetReadMostly || advice > UnsetAccessedBy {
		return core.Invalid("unknown advice %d", int32(advice))
	}
	d := m.Device()
	l := backend.Location{Type: backend.LocationDevice, ID: int32(d.Ordinal())}
	if loc.IsSet() {
		if l, err = loc.backend(); err != nil {
			return err
		}
	} else if advice != SetReadMostly && advice != UnsetReadMostly && advice != UnsetPreferredLocation {
		return core.Invalid("advice %d needs a location", int32(advice))
	}
	if (advice == SetAccessedBy || advice == UnsetAccessedBy) && l.Type != backend.LocationDevice && l.Type != backend.LocationHost {
		return core.Invalid("accessed-by advice names a device or the host, not %v", loc)
	}
	buf, cd := m.Buffer, coreDev(d)
	return core.Do(ctx, cd, func(rt backend.Device, _ *core.Tracker) error {
		p, _, err := cd.Resolve("managed buffer", buf)
		if err != nil {
			return err
		}
		return rt.MemAdvise(p+cuda.DevicePtr(off), n, backend.Advice(advice), l)
	})
}

// Attributes reads the range attributes of the whole allocation; see RangeAttributes.
func (m *Managed[T]) Attributes(ctx context.Context) (RangeAttributes, error) {
	return m.RangeAttributes(ctx, 0, m.Len())
}

// RangeAttributes reads what the driver reports of elements [first, first+count) — read
// mostly, preferred and last prefetch locations, accessed by — in one call
// (cudaMemRangeGetAttributes), and returns once it answered. On CUDA 13.0 locations name host
// NUMA nodes; older runtimes report any host location as Host().
func (m *Managed[T]) RangeAttributes(ctx context.Context, first, count int) (RangeAttributes, error) {
	off, n, err := m.span("RangeAttributes", first, count)
	if err != nil {
		return RangeAttributes{}, err
	}
	buf, cd := m.Buffer, coreDev(m.Device())
	return core.Run(ctx, cd, func(rt backend.Device, _ *core.Tracker) (RangeAttributes, error) {
		p, _, err := cd.Resolve("managed buffer", buf)
		if err != nil {
			return RangeAttributes{}, err
		}
		info, err := rt.MemRangeInfo(p+cuda.DevicePtr(off), n, maxAccessedBy)
		if err != nil {
			return RangeAttributes{}, err
		}
		a := RangeAttributes{ReadMostly: info.ReadMostly, PreferredLocation: locationFrom(info.Preferred),
			LastPrefetchLocation: locationFrom(info.LastPrefetch)}
		for _, v := range info.AccessedBy {
			if l := locationOf(v); l.IsSet() {
				a.AccessedBy = append(a.AccessedBy, l)
			}
		}
		return a, nil
	}).Await(ctx)
}
