package cudart

import (
	"sync"

	"github.com/ebitengine/purego"
)

// hostFuncs maps the userData word of a pending cudaLaunchHostFunc to its Go function.
// The table and the trampoline are process-wide because purego callbacks are: at most 2000 can
// ever be created and none is freed, so there is exactly one trampoline for every host function
// of every Runtime.
var hostFuncs handleTable

// hostFuncTrampoline is the C function pointer of hostFuncDispatch, created on first use.
var hostFuncTrampoline = sync.OnceValue(func() uintptr {
	return purego.NewCallback(hostFuncDispatch)
})

// hostFuncDispatch runs on CUDA's callback thread, inside the C call, when a stream reaches a
// host function: it takes the Go function out of the table and runs it right there. The
// function must not call CUDA (the runtime forbids it from host functions and may deadlock)
// and should return quickly: the stream does not advance until it does. A panic in it ends the
// process, as a panic in any goroutine would. It returns a word because Windows callbacks must
// (cudaHostFn_t returns nothing, so the caller ignores it).
func hostFuncDispatch(userData uintptr) uintptr {
	if userData&graphHostBit != 0 { // a graph's host node: runs at every launch (graph_host.go)
		graphHosts.run(userData &^ graphHostBit)
		return 0
	}
	if fn := hostFuncs.take(userData); fn != nil {
		fn()
	}
	return 0
}

// LaunchHostFunc enqueues fn on s (cudaLaunchHostFunc): it runs once all earlier work on s has
// completed, on a thread CUDA owns, and later work on s waits for it to return. fn must not call
// CUDA. Each fn runs exactly once.
func (r *Runtime) LaunchHostFunc(s Stream, fn func()) error {
	if fn == nil {
		return r.newError("cudaLaunchHostFunc", int32(1)) // cudaErrorInvalidValue
	}
	tramp := hostFuncTrampoline()
	h := hostFuncs.put(fn)
	if err := r.call(fnLaunchHostFunc, uintptr(s), tramp, h); err != nil {
		hostFuncs.take(h) // never enqueued: forget it
		return err
	}
	return nil
}

// handleTable stores values under small nonzero integer handles (slot index + 1), reusing the
// slots of taken values. Safe for concurrent use.
type handleTable struct {
	mu   sync.Mutex
	fns  []func()
	free []uintptr
}

func (t *handleTable) put(fn func()) uintptr {
	t.mu.Lock()
	defer t.mu.Unlock()
	if n := len(t.free); n > 0 {
		h := t.free[n-1]
		t.free = t.free[:n-1]
		t.fns[h-1] = fn
		return h
	}
	t.fns = append(t.fns, fn)
	return uintptr(len(t.fns))
}

// take removes and returns the value under h (nil when there is none).
func (t *handleTable) take(h uintptr) func() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if h == 0 || h > uintptr(len(t.fns)) {
		return nil
	}
	fn := t.fns[h-1]
	if fn == nil {
		return nil
	}
	t.fns[h-1] = nil
	t.free = append(t.free, h)
	return fn
}

// pending is the number of values stored.
func (t *handleTable) pending() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.fns) - len(t.free)
}
