package device

import (
	"errors"
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// A watermark is a point in a stream the Tracker asks the GPU to report when reached. Two
// kinds exist. Memory watermarks (memMarks) have the stream write a sequence number into
// pinned host memory (cuStreamWriteValue32), so checking one is a load from memory, free
// enough to do between any two messages, and many may be in flight. Event watermarks
// (eventMarks) record an event and ask cudaEventQuery, a driver call of about a microsecond:
// the fallback where stream memory operations are missing (11.x drivers without them enabled).
type marker interface {
	// record enqueues a watermark at the current end of s.
	record(s backend.Stream, tr *track) (mark, error)
	// reached reports whether the GPU has passed m, or the error that stopped it.
	reached(tr *track, m mark) (bool, error)
	// done gives back what m held, once it is reached or abandoned.
	done(m mark)
	// forget gives back what tr held, when its stream has nothing in flight.
	forget(tr *track)
	// limit is how many watermarks a stream may have in flight.
	limit() int
	// cheap reports whether checking a watermark costs nothing worth counting.
	cheap() bool
	close() error
}

type mark struct {
	ev   backend.Event // eventMarks
	seq  uint32        // memMarks: the value the stream writes
	done []func(error)
}

// eventMarks are event watermarks. At most two are in flight on a stream: later work waits
// behind them, so that when the GPU runs ahead one query completes many operations.
type eventMarks struct {
	dev  backend.Device
	free []backend.Event
}

func (e *eventMarks) record(s backend.Stream, _ *track) (mark, error) {
	var ev backend.Event
	if n := len(e.free); n > 0 {
		ev, e.free = e.free[n-1], e.free[:n-1]
	} else {
		var err error
		if ev, err = e.dev.EventCreate(backend.EventDisableTiming); err != nil {
			return mark{}, err
		}
	}
	if err := e.dev.EventRecord(ev, s); err != nil {
		e.free = append(e.free, ev)
		return mark{}, err
	}
	return mark{ev: ev}, nil
}

func (e *eventMarks) reached(_ *track, m mark) (bool, error) {
	err := e.dev.EventQuery(m.ev)
	if errors.Is(err, cudaerr.NotReady) {
		return false, nil
	}
	return true, err
}

func (e *eventMarks) done(m mark)   { e.free = append(e.free, m.ev) }
func (e *eventMarks) forget(*track) {}
func (e *eventMarks) limit() int    { return 2 }
func (e *eventMarks) cheap() bool   { return false }

func (e *eventMarks) close() error {
	var errs []error
	for _, ev := range e.free {
		errs = append(errs, e.dev.EventDestroy(ev))
	}
	e.free = nil
	return errors.Join(errs...)
}

// memMarks are memory watermarks: each stream with work in flight owns a 4-byte slot of
// pinned, device-mapped pages, and its n-th watermark writes n there. Slots keep their count
// when a stream gives them back, so the next stream's numbers continue and a stale value never
// looks like a later one.
type memMarks struct {
	dev   backend.Device
	pages []unsafe.Pointer
	free  []*markSlot
}

type markSlot struct {
	word *uint32 // in pinned memory the GPU writes
	next uint32  // the value of the slot's next watermark
}

const markPage = 4096

// newMemMarks checks, on stream s, that the GPU's writes reach pinned memory, and returns
// nil when they do not (no stream memory operations, or no mapped pinned memory).
func newMemMarks(dev backend.Device, s backend.Stream) *memMarks {
	m := &memMarks{dev: dev}
	if err := m.grow(); err != nil {
		return nil
	}
	probe := m.free[len(m.free)-1]
	const want = 0x5eed
	if dev.StreamWriteValue32(s, unsafe.Pointer(probe.word), want) != nil ||
		dev.StreamSynchronize(s) != nil || atomic.LoadUint32(probe.word) != want {
		_ = m.close()
		return nil
	}
	probe.next = want + 1
	return m
}

// grow pins one more page of slots.
func (m *memMarks) grow() error {
	p, err := m.dev.HostAlloc(markPage, backend.HostAllocMapped|backend.HostAllocPortable)
	if err != nil {
		return fmt.Errorf("gpuactor: pinning a page for stream watermarks: %w", err)
	}
	m.pages = append(m.pages, p)
	words := unsafe.Slice((*uint32)(p), markPage/4)
	for i := range words {
		// The first watermark writes 1, so a fresh slot's 0 has not reached it.
		atomic.StoreUint32(&words[i], 0)
		m.free = append(m.free, &markSlot{word: &words[i], next: 1})
	}
	return nil
}

func (m *memMarks) record(s backend.Stream, tr *track) (mark, error) {
	if tr.slot == nil {
		if len(m.free) == 0 {
			if err := m.grow(); err != nil {
				return mark{}, err
			}
		}
		tr.slot, m.free = m.free[len(m.free)-1], m.free[:len(m.free)-1]
	}
	seq := tr.slot.next
	if err := m.dev.StreamWriteValue32(s, unsafe.Pointer(tr.slot.word), seq); err != nil {
		return mark{}, err
	}
	tr.slot.next++
	return mark{seq: seq}, nil
}

// reached compares in modular arithmetic: counts wrap after 2³² watermarks.
func (m *memMarks) reached(tr *track, mk mark) (bool, error) {
	return int32(atomic.LoadUint32(tr.slot.word)-mk.seq) >= 0, nil
}

func (m *memMarks) done(mark) {}

func (m *memMarks) forget(tr *track) {
	if tr.slot != nil {
		m.free = append(m.free, tr.slot)
		tr.slot = nil
	}
}

// limit: checking is free, so many watermarks may be in flight; each still costs an enqueue,
// which the Tracker spaces out under load (markGap).
func (m *memMarks) limit() int  { return 64 }
func (m *memMarks) cheap() bool { return true }

func (m *memMarks) close() error {
	var errs []error
	for _, p := range m.pages {
		errs = append(errs, m.dev.HostFree(p))
	}
	m.pages, m.free = nil, nil
	return errors.Join(errs...)
}
