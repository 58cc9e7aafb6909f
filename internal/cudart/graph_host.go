package cudart

import "sync"

// Host functions of graphs. A graph's host node calls the process's one trampoline at every
// launch of every executable graph made from it, so its userData must stay valid for as long
// as any graph, clone or executable graph holding the node exists; the one-shot table of
// cudaLaunchHostFunc does not fit. Graph host functions live in a table of their own, told
// apart by graphHostBit in userData, and are reference-counted by the graphs that hold them
// (see backend_graph.go).

// graphHostBit marks a userData word as a graph host function's handle.
const graphHostBit = uintptr(1) << 62

var graphHosts refTable

// refTable stores functions under small handles with a reference count. Safe for concurrent
// use: CUDA's thread reads it while the actor thread adds and releases.
type refTable struct {
	mu   sync.Mutex
	fns  []func()
	refs []int
	free []uintptr
}

// put stores fn with one reference and returns its handle (never 0).
func (t *refTable) put(fn func()) uintptr {
	t.mu.Lock()
	defer t.mu.Unlock()
	if n := len(t.free); n > 0 {
		h := t.free[n-1]
		t.free = t.free[:n-1]
		t.fns[h-1], t.refs[h-1] = fn, 1
		return h
	}
	t.fns = append(t.fns, fn)
	t.refs = append(t.refs, 1)
	return uintptr(len(t.fns))
}

// retain adds a reference to each handle.
func (t *refTable) retain(hs []uintptr) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, h := range hs {
		if h > 0 && h <= uintptr(len(t.fns)) && t.fns[h-1] != nil {
			t.refs[h-1]++
		}
	}
}

// release drops a reference from each handle, forgetting functions left with none.
func (t *refTable) release(hs []uintptr) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, h := range hs {
		if h == 0 || h > uintptr(len(t.fns)) || t.fns[h-1] == nil {
			continue
		}
		if t.refs[h-1]--; t.refs[h-1] == 0 {
			t.fns[h-1] = nil
			t.free = append(t.free, h)
		}
	}
}

// run calls the function under h, if any.
func (t *refTable) run(h uintptr) {
	t.mu.Lock()
	var fn func()
	if h > 0 && h <= uintptr(len(t.fns)) {
		fn = t.fns[h-1]
	}
	t.mu.Unlock()
	if fn != nil {
		fn()
	}
}

// pending is the number of functions stored.
func (t *refTable) pending() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.fns) - len(t.free)
}
