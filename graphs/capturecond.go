package graphs

import (
	"context"
	"fmt"

	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
	"github.com/gpuactor/gpuactor/streams"
)

// Capture into an existing graph, and conditional nodes inside a capture.

// BeginCaptureInto starts capturing s into g, after deps (nodes of g): what is queued on s
// until End becomes nodes of g. This is how a conditional node's body is filled from
// ordinary stream work (cudaStreamBeginCaptureToGraph, CUDA 12.3+). End returns g itself;
// Abort ends the capture and leaves in g what was captured.
func BeginCaptureInto(ctx context.Context, s *streams.Stream, g *Graph, deps Deps, opts ...CaptureOption) (*Capturing, error) {
	c := capConfig{mode: ThreadLocal}
	for _, o := range opts {
		o(&c)
	}
	if c.mode < Global || c.mode > Relaxed {
		return nil, invalid("unknown capture mode %d", int32(c.mode))
	}
	if s == nil || g == nil {
		return nil, invalid("BeginCaptureInto with a nil stream or graph")
	}
	if g.dev != s.Device() {
		return nil, wrongDevice("graph captured into", g.dev, s.Device())
	}
	hs, err := deps.handles(g)
	if err != nil {
		return nil, err
	}
	return core.RunOn(ctx, coreStream(s), func(rt backend.Device, tr *core.Tracker, h backend.Stream) (*Capturing, error) {
		if g.closed.Load() {
			return nil, closed("graph")
		}
		added := tr.BeginCapture(h, backend.CaptureMode(c.mode))
		if err := rt.StreamBeginCaptureToGraph(h, g.h, hs, backend.CaptureMode(c.mode)); err != nil {
			if added {
				tr.EndCapture(h)
			}
			return nil, fmt.Errorf("%w: beginning a capture into a graph: %w", ErrCapture, err)
		}
		cp := &Capturing{s: s, res: g.res, into: g}
		tr.Own(cp, func() error { return cp.end(rt, tr, h, true) })
		return cp, nil
	}).Await(ctx)
}

// CaptureInto runs fn with s capturing into g after deps, and returns once the capture has
// ended; on failure it is aborted, as Capture's is.
func CaptureInto(ctx context.Context, s *streams.Stream, g *Graph, deps Deps, fn func(ctx context.Context) error, opts ...CaptureOption) error {
	if fn == nil {
		return invalid("CaptureInto of a nil function")
	}
	c, err := BeginCaptureInto(ctx, s, g, deps, opts...)
	if err != nil {
		return err
	}
	_, err = c.run(ctx, fn)
	return err
}

// result is the graph End returns; on the actor thread.
func (c *Capturing) result(rt backend.Device, tr *core.Tracker, h backend.Graph) *Graph {
	switch {
	case c.into != nil:
		return c.into
	case c.pending != nil:
		tr.Own(c.pending, func() error { return c.pending.destroy(rt) })
		return c.pending
	}
	return adopt(c.s.Device(), rt, tr, h, c.res)
}

// dropPending forgets the graph of a discarded capture: its conditions and bodies are refused
// from now on; on the actor thread.
func (c *Capturing) dropPending(rt backend.Device) error {
	if c.pending == nil {
		return nil
	}
	c.pending.closed.Store(true)
	c.pending.closeBodies()
	return c.pending.res.release(rt)
}

// graphOn is the graph being captured, made known to Go the first time it is needed; on the
// actor thread. It is not owned until End hands it over.
func (c *Capturing) graphOn(rt backend.Device, h backend.Stream) (*Graph, backend.CaptureInfo, error) {
	info, err := rt.StreamCaptureInfo(h)
	if err != nil {
		return nil, info, err
	}
	if info.Status != backend.CaptureActive {
		return nil, info, fmt.Errorf("%w: the stream's capture was invalidated or ended", ErrCapture)
	}
	if c.into != nil {
		return c.into, info, nil
	}
	if c.pending == nil {
		c.pending = &Graph{dev: c.s.Device(), h: info.Graph, res: c.res.retain(), nodes: map[backend.GraphNode]*Node{}}
	}
	return c.pending, info, nil
}

// NewCondition makes a condition of the graph being captured, for conditional nodes added to
// the capture (AddIf, AddWhile…) or to their bodies. It returns once the condition exists.
func (c *Capturing) NewCondition(ctx context.Context, opts ...ConditionOption) (*Condition, error) {
	if c == nil || c.ended.Load() {
		return nil, invalid("NewCondition of a nil or ended capture")
	}
	cond := &Condition{}
	for _, o := range opts {
		o(cond)
	}
	var flags uint32
	if cond.setDefault {
		flags = backend.CondAssignDefault
	}
	return core.RunOn(ctx, coreStream(c.s), func(rt backend.Device, _ *core.Tracker, h backend.Stream) (*Condition, error) {
		g, _, err := c.graphOn(rt, h)
		if err != nil {
			return nil, err
		}
		if cond.h, err = rt.GraphConditionalHandleCreate(g.h, cond.def, flags); err != nil {
			return nil, fmt.Errorf("gpuactor/graphs: making a condition: %w", err)
		}
		cond.g = g
		return cond, nil
	}).Await(ctx)
}

// addConditional adds a conditional node to the capture after the stream's current point and
// makes it the point, so that what is queued next runs after it.
func (c *Capturing) addConditional(ctx context.Context, cond *Condition, typ backend.CondType, size uint32) (added, error) {
	if c == nil || c.ended.Load() {
		return added{}, invalid("a conditional node added to a nil or ended capture")
	}
	return core.RunOn(ctx, coreStream(c.s), func(rt backend.Device, _ *core.Tracker, h backend.Stream) (added, error) {
		g, info, err := c.graphOn(rt, h)
		if err != nil {
			return added{}, err
		}
		if err := cond.scoped(g); err != nil {
			return added{}, err
		}
		a, err := g.addConditionalOn(rt, info.Deps, cond, typ, size)
		if err != nil {
			return added{}, err
		}
		if err := rt.StreamUpdateCaptureDependencies(h, []backend.GraphNode{a.n.h}, backend.CaptureDepsSet); err != nil {
			return added{}, err
		}
		return a, nil
	}).Await(ctx)
}

// AddIf adds to the capture a node that runs body when cond is non-zero (see Graph.AddIf);
// what is queued on the stream next runs after it.
func (c *Capturing) AddIf(ctx context.Context, cond *Condition) (*Node, *Graph, error) {
	a, err := c.addConditional(ctx, cond, backend.CondIf, 1)
	if err != nil {
		return nil, nil, err
	}
	return a.n, a.bodies[0], nil
}

// AddIfElse adds to the capture an if/else node (see Graph.AddIfElse).
func (c *Capturing) AddIfElse(ctx context.Context, cond *Condition) (n *Node, then, els *Graph, err error) {
	a, err := c.addConditional(ctx, cond, backend.CondIf, 2)
	if err != nil {
		return nil, nil, nil, err
	}
	return a.n, a.bodies[0], a.bodies[1], nil
}

// AddWhile adds to the capture a while node (see Graph.AddWhile).
func (c *Capturing) AddWhile(ctx context.Context, cond *Condition) (*Node, *Graph, error) {
	a, err := c.addConditional(ctx, cond, backend.CondWhile, 1)
	if err != nil {
		return nil, nil, err
	}
	return a.n, a.bodies[0], nil
}

// AddSwitch adds to the capture a switch node of n bodies (see Graph.AddSwitch).
func (c *Capturing) AddSwitch(ctx context.Context, cond *Condition, n int) (*Node, []*Graph, error) {
	if c == nil {
		return nil, nil, invalid("a conditional node added to a nil capture")
	}
	if n <= 0 || n > 1<<16 {
		return nil, nil, invalid("a switch node of %d bodies", n)
	}
	a, err := c.addConditional(ctx, cond, backend.CondSwitch, uint32(n))
	return a.n, a.bodies, err
}
