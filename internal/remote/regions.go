package remote

import (
	"sort"
	"sync"
	"unsafe"
)

// region is one host allocation both processes map: this process's mapping and the other
// process's address of the same memory.
type region struct {
	mem   []byte
	peer  uint64
	flags uint32 // HostAlloc's flags, answered here (HostGetFlags)
}

func (r *region) base() uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(r.mem))) }

// at is the pointer off bytes into the mapping (off may be its length: an empty range's end).
func (r *region) at(off uint64) unsafe.Pointer {
	return unsafe.Add(unsafe.Pointer(unsafe.SliceData(r.mem)), off)
}

// regionTable is the host allocations shared with the other process, sorted by address, so
// a pointer anywhere inside one translates to the other side's address.
type regionTable struct {
	mu sync.Mutex
	rs []*region
}

func (t *regionTable) add(r *region) {
	t.mu.Lock()
	defer t.mu.Unlock()
	i := sort.Search(len(t.rs), func(i int) bool { return t.rs[i].base() > r.base() })
	t.rs = append(t.rs, nil)
	copy(t.rs[i+1:], t.rs[i:])
	t.rs[i] = r
}

// remove takes out the region that starts at base; nil when none does.
func (t *regionTable) remove(base uintptr) *region {
	t.mu.Lock()
	defer t.mu.Unlock()
	i := sort.Search(len(t.rs), func(i int) bool { return t.rs[i].base() >= base })
	if i == len(t.rs) || t.rs[i].base() != base {
		return nil
	}
	r := t.rs[i]
	t.rs = append(t.rs[:i], t.rs[i+1:]...)
	return r
}

// find is the region holding all of [p, p+n) and p's offset in it.
func (t *regionTable) find(p uintptr, n uint64) (*region, uint64, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	i := sort.Search(len(t.rs), func(i int) bool { return t.rs[i].base() > p }) - 1
	if i < 0 {
		return nil, 0, false
	}
	r := t.rs[i]
	off := uint64(p - r.base())
	if off > uint64(len(r.mem)) || n > uint64(len(r.mem))-off {
		return nil, 0, false
	}
	return r, off, true
}

// all takes out every region, for a release of them all.
func (t *regionTable) all() []*region {
	t.mu.Lock()
	defer t.mu.Unlock()
	rs := t.rs
	t.rs = nil
	return rs
}
