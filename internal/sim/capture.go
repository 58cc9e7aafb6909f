package sim

import (
	"slices"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// Stream capture: while a stream captures, the work queued on it becomes nodes of the capture's
// graph instead of running. Each stream taking part has a tail: the nodes its next op depends
// on. Recording an event in a capture remembers the recording stream's tail; a stream that
// waits on that event joins the capture (a fork) or, already in it, adds the event's tail to
// its own (a join). The capture can end only on the stream that began it, once every other
// stream's work has been joined back into it.
//
// The modes are accepted and reported but not told apart: the simulator has no notion of
// another thread's unsafe calls. Synchronizing or querying a capturing stream invalidates the
// capture, as it does on a GPU.

// StreamBeginCapture starts capturing s.
func (d *device) StreamBeginCapture(sh backend.Stream, mode backend.CaptureMode) error {
	const op = "cudaStreamBeginCapture"
	if err := d.alive(op); err != nil {
		return err
	}
	if sh == 0 {
		return d.fail(op, cudaerr.StreamCaptureUnsupported, "the legacy default stream cannot be captured")
	}
	s, err := d.ownStream(op, sh)
	if err != nil {
		return err
	}
	if mode < backend.CaptureGlobal || mode > backend.CaptureRelaxed {
		return d.fail(op, cudaerr.InvalidValue, "unknown capture mode %d", mode)
	}
	gs := &d.graphs
	gs.mu.Lock()
	defer gs.mu.Unlock()
	gs.init()
	if gs.captures[s] != nil {
		return d.fail(op, cudaerr.IllegalState, "stream %#x is already capturing", uintptr(sh))
	}
	g := d.newGraphLocked()
	c := &capture{id: uint64(d.b.nextHandle()), mode: mode, origin: s, graph: g, tails: map[*stream][]*snode{s: nil}}
	gs.captures[s] = c
	return nil
}

// StreamEndCapture ends the capture begun on s and hands over its graph.
func (d *device) StreamEndCapture(sh backend.Stream) (backend.Graph, error) {
	const op = "cudaStreamEndCapture"
	s, err := d.ownStream(op, sh)
	if err != nil {
		return 0, err
	}
	gs := &d.graphs
	gs.mu.Lock()
	defer gs.mu.Unlock()
	gs.init()
	c := gs.captures[s]
	if c == nil {
		return 0, d.fail(op, cudaerr.IllegalState, "stream %#x is not capturing", uintptr(sh))
	}
	if c.origin != s {
		// Ending on a forked stream invalidates the whole capture, as CUDA does.
		c.invalid = "the capture was ended on a stream other than the one that began it"
		return 0, d.fail(op, cudaerr.StreamCaptureUnmatched, "stream %#x joined the capture but did not begin it", uintptr(sh))
	}
	for st := range c.tails {
		delete(gs.captures, st)
	}
	for e, r := range gs.recorded {
		if r.c == c {
			delete(gs.recorded, e)
		}
	}
	discard := func(code cudaerr.Code, why string) (backend.Graph, error) {
		if !c.into { // a graph captured into stays the caller's, with what was captured
			delete(gs.graphs, c.graph.h)
			d.dropNodesLocked(c.graph)
		}
		return 0, d.fail(op, code, "%s", why)
	}
	if c.invalid != "" {
		return discard(cudaerr.StreamCaptureInvalidated, c.invalid)
	}
	joined := map[*snode]bool{}
	var mark func(n *snode)
	mark = func(n *snode) {
		if !joined[n] {
			joined[n] = true
			for _, dep := range n.deps {
				mark(dep)
			}
		}
	}
	for _, n := range c.tails[s] {
		mark(n)
	}
	for st, tail := range c.tails {
		for _, n := range tail {
			if st != s && !joined[n] {
				return discard(cudaerr.StreamCaptureUnjoined, "work captured on a forked stream was not joined back into the origin stream")
			}
		}
	}
	return c.graph.h, nil
}

// StreamCaptureInfo reports s's capture state.
func (d *device) StreamCaptureInfo(sh backend.Stream) (backend.CaptureInfo, error) {
	const op = "cudaStreamGetCaptureInfo"
	s, err := d.stream(op, sh)
	if err != nil {
		return backend.CaptureInfo{}, err
	}
	gs := &d.graphs
	gs.mu.Lock()
	defer gs.mu.Unlock()
	gs.init()
	c := gs.captures[s]
	if c == nil {
		return backend.CaptureInfo{Status: backend.CaptureNone}, nil
	}
	info := backend.CaptureInfo{Status: backend.CaptureActive, ID: c.id, Graph: c.graph.h}
	if c.invalid != "" {
		info.Status = backend.CaptureInvalidated
	}
	for _, n := range c.tails[s] {
		info.Deps = append(info.Deps, n.h)
	}
	return info, nil
}

// captured turns t, queued on s, into a node when s is capturing.
func (d *device) captured(s *stream, t *task) bool {
	typ := backend.NodeEmpty
	switch t.name {
	case "host function":
		typ = backend.NodeHost
	case "memset", "2D memset", "3D memset":
		typ = backend.NodeMemset
	case "host-to-device copy", "device-to-host copy", "device-to-device copy",
		"2D host-to-device copy", "2D device-to-host copy", "2D device-to-device copy", "3D copy":
		typ = backend.NodeMemcpy
	}
	return d.captureNode(s, func() *snode { return &snode{typ: typ, label: t.name, run: t.run} })
}

// captureNode appends the node mk makes to s's capture after s's tail. mk runs only when s is
// capturing: every operation on every stream asks.
func (d *device) captureNode(s *stream, mk func() *snode) bool {
	gs := &d.graphs
	gs.mu.Lock()
	defer gs.mu.Unlock()
	c := gs.captures[s]
	if c == nil {
		return false
	}
	if c.invalid != "" {
		return true // dropped: the capture fails when it ends
	}
	n := mk()
	n.deps = slices.Clone(c.tails[s])
	d.insertLocked(c.graph, n)
	c.tails[s] = []*snode{n}
	return true
}

// captureKernel turns a launch on a capturing stream into a kernel node.
func (d *device) captureKernel(s *stream, k *kernel, grid, block backend.Dim3, sharedMem uint32, args []backend.Arg) bool {
	return d.captureNode(s, func() *snode {
		return &snode{typ: backend.NodeKernel, label: k.label, kern: k,
			params: backend.KernelNode{Kernel: k.h, Grid: grid, Block: block, SharedMem: sharedMem, Args: slices.Clone(args)}}
	})
}

// captureRecord remembers e's record on a capturing stream; a record on a stream that is not
// capturing makes e an ordinary event again.
func (d *device) captureRecord(e *event, s *stream) bool {
	gs := &d.graphs
	gs.mu.Lock()
	defer gs.mu.Unlock()
	gs.init()
	c := gs.captures[s]
	if c == nil {
		delete(gs.recorded, e)
		return false
	}
	gs.recorded[e] = &capturedRecord{c: c, deps: slices.Clone(c.tails[s])}
	return true
}

// captureWait handles a wait on an event recorded in a capture (s forks into the capture or
// joins the event's work) and a capturing stream's wait on an ordinary event (no node: work
// recorded outside the capture is not part of the graph).
func (d *device) captureWait(s *stream, e *event) (bool, error) {
	gs := &d.graphs
	gs.mu.Lock()
	defer gs.mu.Unlock()
	gs.init()
	r := gs.recorded[e]
	c := gs.captures[s]
	switch {
	case r == nil && c == nil:
		return false, nil
	case r == nil:
		return true, nil
	case c == nil:
		if _, live := gs.captures[r.c.origin]; !live {
			return false, nil
		}
		gs.captures[s] = r.c
		r.c.tails[s] = slices.Clone(r.deps)
		return true, nil
	case c != r.c:
		return true, d.fail("cudaStreamWaitEvent", cudaerr.StreamCaptureIsolation, "stream %#x waits on an event recorded in another capture", uintptr(s.h))
	}
	for _, n := range r.deps {
		if !slices.Contains(c.tails[s], n) {
			c.tails[s] = append(c.tails[s], n)
		}
	}
	return true, nil
}

// captureForbids invalidates s's capture and returns the error of a call that must not be
// made on a capturing stream (synchronizing, querying).
func (d *device) captureForbids(op string, s *stream) error {
	gs := &d.graphs
	gs.mu.Lock()
	defer gs.mu.Unlock()
	c := gs.captures[s]
	if c == nil {
		return nil
	}
	if c.invalid == "" {
		c.invalid = op + " was called on a capturing stream"
	}
	return d.fail(op, cudaerr.StreamCaptureUnsupported, "stream %#x is capturing", uintptr(s.h))
}
