package core

import (
	"bytes"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
)

// hostCalls are the goroutines running the device's host functions now. A host function that
// waits for its device (Synchronize, Close) or for its own stream waits for itself: CUDA
// forbids such calls in a host function, and here the wait would never end. The calls that
// would check first, and fail with ErrInHostFunc.
type hostCalls struct {
	n   atomic.Int32 // how many run: the check costs nothing while none does
	mu  sync.Mutex
	ids map[uint64]struct{}
}

// EnterHostFunc marks the calling goroutine as running one of d's host functions, until the
// returned function is called.
func (d *Device) EnterHostFunc() (exit func()) {
	h := &d.hostCalls
	id := goroutineID()
	h.mu.Lock()
	if h.ids == nil {
		h.ids = map[uint64]struct{}{}
	}
	h.ids[id] = struct{}{}
	h.mu.Unlock()
	h.n.Add(1)
	return func() {
		h.n.Add(-1)
		h.mu.Lock()
		delete(h.ids, id)
		h.mu.Unlock()
	}
}

// InHostFunc is an ErrInHostFunc error naming call when the calling goroutine runs one of d's
// host functions, nil otherwise.
func (d *Device) InHostFunc(call string) error {
	h := &d.hostCalls
	if h.n.Load() == 0 {
		return nil
	}
	id := goroutineID()
	h.mu.Lock()
	_, in := h.ids[id]
	h.mu.Unlock()
	if !in {
		return nil
	}
	return wrap(ErrInHostFunc, "%s from a host function of device %d would wait for itself", []any{call, d.ordinal})
}

// goroutineID reads the calling goroutine's id from its stack header ("goroutine 42 [...").
// Go gives no other way; it costs a microsecond, paid only while host functions run.
func goroutineID() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	if i := bytes.IndexByte(b, ' '); i > 0 {
		b = b[:i]
	}
	id, _ := strconv.ParseUint(string(b), 10, 64)
	return id
}
