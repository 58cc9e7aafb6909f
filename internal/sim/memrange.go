package sim

import (
	"slices"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// Managed-memory advice and prefetch locations, kept page by page as the driver keeps them: a
// call on part of an allocation covers the pages it touches, and a query over a range reports
// an attribute only when every page of the range agrees on it.

// managedPage is the unit advice and prefetches apply to.
const managedPage = 4 << 10

// simNUMANodes is how many host NUMA nodes the simulated machine has.
const simNUMANodes = 1

// pageAttrs is what advice and prefetches recorded for a page.
type pageAttrs struct {
	readMostly   bool
	preferred    backend.Location // Type LocationInvalid: none
	lastPrefetch backend.Location // Type LocationInvalid: never prefetched
	accessedBy   []int32          // sorted devices, CPUDevice for the host
}

func (a pageAttrs) equal(b pageAttrs) bool {
	return a.readMostly == b.readMostly && a.preferred == b.preferred && a.lastPrefetch == b.lastPrefetch &&
		slices.Equal(a.accessedBy, b.accessedBy)
}

// attrSeg is a run of pages with the same attributes, ending (exclusive) at byte offset end of
// the allocation; it starts where the one before ends.
type attrSeg struct {
	end uint64
	a   pageAttrs
}

// rangeAttrs is an allocation's pages' attributes as runs covering the whole allocation.
type rangeAttrs struct{ segs []attrSeg }

func newRangeAttrs(size uint64) rangeAttrs {
	return rangeAttrs{segs: []attrSeg{{end: pagesOf(size)}}}
}

// pagesOf is size rounded up to whole pages.
func pagesOf(size uint64) uint64 { return (size + managedPage - 1) / managedPage * managedPage }

// span is the pages holding [off, off+n) of an allocation of size bytes.
func span(off, n, size uint64) (lo, hi uint64) {
	return off / managedPage * managedPage, min(pagesOf(off+max(n, 1)), pagesOf(size))
}

// split makes a run boundary at off and returns the index of the run starting there.
func (r *rangeAttrs) split(off uint64) int {
	start := uint64(0)
	for i, s := range r.segs {
		if off == start {
			return i
		}
		if off < s.end {
			r.segs = slices.Insert(r.segs, i, attrSeg{end: off, a: s.a})
			r.segs[i].a.accessedBy = slices.Clone(s.a.accessedBy)
			return i + 1
		}
		start = s.end
	}
	return len(r.segs)
}

// apply changes the attributes of the pages in [lo, hi) with fn, then merges equal runs.
func (r *rangeAttrs) apply(lo, hi uint64, fn func(*pageAttrs)) {
	i, j := r.split(lo), r.split(hi)
	for k := i; k < j; k++ {
		fn(&r.segs[k].a)
	}
	merged := r.segs[:1]
	for _, s := range r.segs[1:] {
		if last := &merged[len(merged)-1]; last.a.equal(s.a) {
			last.end = s.end
		} else {
			merged = append(merged, s)
		}
	}
	r.segs = merged
}

// query is what holds for every page of [lo, hi).
func (r *rangeAttrs) query(lo, hi uint64) pageAttrs {
	var out pageAttrs
	first := true
	start := uint64(0)
	for _, s := range r.segs {
		if s.end > lo && start < hi {
			if first {
				out = s.a
				out.accessedBy = slices.Clone(s.a.accessedBy)
				first = false
			} else {
				out.readMostly = out.readMostly && s.a.readMostly
				if out.preferred != s.a.preferred {
					out.preferred = backend.Location{}
				}
				if out.lastPrefetch != s.a.lastPrefetch {
					out.lastPrefetch = backend.Location{}
				}
				out.accessedBy = slices.DeleteFunc(out.accessedBy, func(d int32) bool { return !slices.Contains(s.a.accessedBy, d) })
			}
		}
		start = s.end
	}
	return out
}

// managedLocation checks loc for op and returns it as recorded: the host with ID 0, the
// current host NUMA node as node 0 (the simulated machine's only one). accessedBy takes a
// device or the host only, as cudaMemAdviseSetAccessedBy does.
func (d *device) managedLocation(op string, loc backend.Location, accessedBy bool) (backend.Location, error) {
	switch loc.Type {
	case backend.LocationDevice:
		if loc.ID < 0 || int(loc.ID) >= len(d.b.devices) {
			return loc, d.fail(op, cudaerr.InvalidDevice, "device %d does not exist", loc.ID)
		}
		return loc, nil
	case backend.LocationHost:
		return backend.Location{Type: backend.LocationHost}, nil
	case backend.LocationHostNUMA, backend.LocationHostNUMACurrent:
		if accessedBy {
			return loc, d.fail(op, cudaerr.InvalidValue, "accessed-by advice takes a device or the host, not a host NUMA location (type %d)", int32(loc.Type))
		}
		if loc.Type == backend.LocationHostNUMA && (loc.ID < 0 || loc.ID >= simNUMANodes) {
			return loc, d.fail(op, cudaerr.InvalidValue, "host NUMA node %d does not exist: the simulated machine has %d, from 0", loc.ID, simNUMANodes)
		}
		return backend.Location{Type: backend.LocationHostNUMA}, nil
	}
	return loc, d.fail(op, cudaerr.InvalidValue, "location type %d is not a device, the host or a host NUMA node", int32(loc.Type))
}

// legacyID is a location in the int form of the older range attributes: a device,
// cudaCpuDeviceId for the host (any node of it), cudaInvalidDeviceId for none.
func legacyID(l backend.Location) int32 {
	switch l.Type {
	case backend.LocationDevice:
		return l.ID
	case backend.LocationHost, backend.LocationHostNUMA:
		return backend.CPUDevice
	}
	return noDevice
}

// MemPrefetch records the migration when s reaches it; memory is always where the host and
// every device can use it.
func (d *device) MemPrefetch(p backend.DevicePtr, n uint64, loc backend.Location, s backend.Stream) error {
	const op = "cudaMemPrefetchAsync"
	if err := d.alive(op); err != nil {
		return err
	}
	st, err := d.ownStream(op, s)
	if err != nil {
		return err
	}
	to, err := d.managedLocation(op, loc, false)
	if err != nil {
		return err
	}
	a := d.alloc
	a.mu.Lock()
	m, err := a.managedLocked(op, p, n)
	a.mu.Unlock()
	if err != nil {
		return err
	}
	lo, hi := span(uint64(p)-m.addr, n, m.size)
	d.submit(st, &task{name: "managed prefetch", run: func() {
		a.mu.Lock()
		m.attrs.apply(lo, hi, func(pa *pageAttrs) { pa.lastPrefetch = to })
		a.mu.Unlock()
	}})
	return nil
}

// MemAdvise records advice for the pages of [p, p+n).
func (d *device) MemAdvise(p backend.DevicePtr, n uint64, advice backend.Advice, loc backend.Location) error {
	const op = "cudaMemAdvise"
	if err := d.alive(op); err != nil {
		return err
	}
	var set func(*pageAttrs)
	switch advice {
	case backend.AdviseSetReadMostly, backend.AdviseUnsetReadMostly:
		set = func(pa *pageAttrs) { pa.readMostly = advice == backend.AdviseSetReadMostly }
	case backend.AdviseUnsetPreferredLocation:
		set = func(pa *pageAttrs) { pa.preferred = backend.Location{} }
	case backend.AdviseSetPreferredLocation, backend.AdviseSetAccessedBy, backend.AdviseUnsetAccessedBy:
		to, err := d.managedLocation(op, loc, advice != backend.AdviseSetPreferredLocation)
		if err != nil {
			return err
		}
		id := legacyID(to)
		switch advice {
		case backend.AdviseSetPreferredLocation:
			set = func(pa *pageAttrs) { pa.preferred = to }
		case backend.AdviseSetAccessedBy:
			set = func(pa *pageAttrs) {
				if i, found := slices.BinarySearch(pa.accessedBy, id); !found {
					pa.accessedBy = slices.Insert(slices.Clone(pa.accessedBy), i, id)
				}
			}
		default:
			set = func(pa *pageAttrs) {
				pa.accessedBy = slices.DeleteFunc(slices.Clone(pa.accessedBy), func(v int32) bool { return v == id })
			}
		}
	default:
		return d.fail(op, cudaerr.InvalidValue, "unknown advice %d", int32(advice))
	}
	a := d.alloc
	a.mu.Lock()
	defer a.mu.Unlock()
	m, err := a.managedLocked(op, p, n)
	if err != nil {
		return err
	}
	lo, hi := span(uint64(p)-m.addr, n, m.size)
	m.attrs.apply(lo, hi, set)
	return nil
}

// rangeQuery is what every page of [p, p+n) of managed memory agrees on.
func (d *device) rangeQuery(op string, p backend.DevicePtr, n uint64) (pageAttrs, error) {
	a := d.alloc
	a.mu.Lock()
	defer a.mu.Unlock()
	m, err := a.managedLocked(op, p, n)
	if err != nil {
		return pageAttrs{}, err
	}
	lo, hi := span(uint64(p)-m.addr, n, m.size)
	return m.attrs.query(lo, hi), nil
}

// MemRangeAttribute reads one attribute of [p, p+n), as cudaMemRangeGetAttribute.
func (d *device) MemRangeAttribute(p backend.DevicePtr, n uint64, attr backend.RangeAttr, out []int32) error {
	const op = "cudaMemRangeGetAttribute"
	if err := d.alive(op); err != nil {
		return err
	}
	if len(out) == 0 || (attr != backend.RangeAccessedBy && len(out) != 1) {
		return d.fail(op, cudaerr.InvalidValue, "%d result words for range attribute %d", len(out), int32(attr))
	}
	q, err := d.rangeQuery(op, p, n)
	if err != nil {
		return err
	}
	switch attr {
	case backend.RangeReadMostly:
		out[0] = 0
		if q.readMostly {
			out[0] = 1
		}
	case backend.RangePreferredLocation:
		out[0] = legacyID(q.preferred)
	case backend.RangeLastPrefetchLocation:
		out[0] = legacyID(q.lastPrefetch)
	case backend.RangePreferredLocationType:
		out[0] = int32(q.preferred.Type)
	case backend.RangePreferredLocationID:
		out[0] = q.preferred.ID
	case backend.RangeLastPrefetchLocationType:
		out[0] = int32(q.lastPrefetch.Type)
	case backend.RangeLastPrefetchLocationID:
		out[0] = q.lastPrefetch.ID
	case backend.RangeAccessedBy:
		for i := range out {
			out[i] = noDevice
			if i < len(q.accessedBy) {
				out[i] = q.accessedBy[i]
			}
		}
	default:
		return d.fail(op, cudaerr.InvalidValue, "unknown range attribute %d", int32(attr))
	}
	return nil
}

// MemRangeInfo reads every attribute of [p, p+n) at once, as cudaMemRangeGetAttributes.
func (d *device) MemRangeInfo(p backend.DevicePtr, n uint64, maxAccessedBy int) (backend.RangeInfo, error) {
	const op = "cudaMemRangeGetAttributes"
	if err := d.alive(op); err != nil {
		return backend.RangeInfo{}, err
	}
	if maxAccessedBy < 1 || maxAccessedBy > 1024 {
		return backend.RangeInfo{}, d.fail(op, cudaerr.InvalidValue, "room for %d accessed-by devices: want 1 to 1024", maxAccessedBy)
	}
	q, err := d.rangeQuery(op, p, n)
	if err != nil {
		return backend.RangeInfo{}, err
	}
	info := backend.RangeInfo{ReadMostly: q.readMostly, Preferred: q.preferred, LastPrefetch: q.lastPrefetch}
	if len(q.accessedBy) > 0 {
		info.AccessedBy = q.accessedBy[:min(len(q.accessedBy), maxAccessedBy)]
	}
	return info, nil
}
