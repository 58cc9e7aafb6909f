package graphs

import (
	"context"

	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
	"github.com/gpuactor/gpuactor/streams"
)

// Dependencies is a point in a capture: the captured nodes the capturing stream's next
// operation would depend on (cudaStreamGetCaptureInfo's dependency set). Taken with
// Capturing.Dependencies and given back with SetDependencies or AddDependencies, it lets one
// stream capture branches that run side by side in the graph, without forking onto other
// streams and joining them back with events.
type Dependencies struct {
	c     *Capturing
	nodes []backend.GraphNode
}

// Len is how many nodes the point depends on (0 at the start of a capture).
func (d Dependencies) Len() int { return len(d.nodes) }

// Dependencies is the capture's current point: what the next operation queued on the
// capturing stream would depend on. It returns once the runtime has answered.
func (c *Capturing) Dependencies(ctx context.Context) (Dependencies, error) {
	if c == nil {
		return Dependencies{}, invalid("Dependencies of a nil capture")
	}
	if c.ended.Load() {
		return Dependencies{}, invalid("Dependencies of an ended capture")
	}
	return core.RunOn(ctx, coreStream(c.s), func(rt backend.Device, _ *core.Tracker, h backend.Stream) (Dependencies, error) {
		info, err := rt.StreamCaptureInfo(h)
		if err != nil {
			return Dependencies{}, err
		}
		if info.Status != backend.CaptureActive {
			return Dependencies{}, invalid("Dependencies: the stream's capture was invalidated or ended")
		}
		return Dependencies{c: c, nodes: info.Deps}, nil
	}).Await(ctx)
}

// SetDependencies makes the next operation queued on the capturing stream depend on the nodes
// of deps instead of on what was queued last (cudaStreamUpdateCaptureDependencies with
// cudaStreamSetCaptureDependencies): the operations queued from there on form a branch
// parallel to those queued since the points were taken. Points of another capture are an
// ErrInvalidArgument error. It returns once the runtime has done it.
func (c *Capturing) SetDependencies(ctx context.Context, deps ...Dependencies) error {
	return c.updateDeps(ctx, "SetDependencies", backend.CaptureDepsSet, deps)
}

// AddDependencies makes the next operation queued on the capturing stream depend on the nodes
// of deps as well as on what was queued last (cudaStreamUpdateCaptureDependencies with
// cudaStreamAddCaptureDependencies): a join of branches. It returns once the runtime has
// done it.
func (c *Capturing) AddDependencies(ctx context.Context, deps ...Dependencies) error {
	return c.updateDeps(ctx, "AddDependencies", backend.CaptureDepsAdd, deps)
}

func (c *Capturing) updateDeps(ctx context.Context, what string, flags uint32, deps []Dependencies) error {
	if c == nil {
		return invalid("%s of a nil capture", what)
	}
	if c.ended.Load() {
		return invalid("%s of an ended capture", what)
	}
	var nodes []backend.GraphNode
	for i, d := range deps {
		if d.c != c {
			return invalid("%s: point %d was not taken in this capture", what, i)
		}
		nodes = append(nodes, d.nodes...)
	}
	_, err := core.RunOn(ctx, coreStream(c.s), func(rt backend.Device, _ *core.Tracker, h backend.Stream) (struct{}, error) {
		return struct{}{}, rt.StreamUpdateCaptureDependencies(h, nodes, flags)
	}).Await(ctx)
	return err
}

// IsCapturing reports whether s is capturing (cudaStreamIsCapturing); an invalidated capture
// counts as capturing until it ends. It returns once the runtime has answered; Status also
// gives the capture's id and whether it was invalidated.
func IsCapturing(ctx context.Context, s *streams.Stream) (bool, error) {
	if s == nil {
		return false, invalid("IsCapturing of a nil stream")
	}
	return core.RunOn(ctx, coreStream(s), func(rt backend.Device, _ *core.Tracker, h backend.Stream) (bool, error) {
		st, err := rt.StreamIsCapturing(h)
		return st != backend.CaptureNone, err
	}).Await(ctx)
}
