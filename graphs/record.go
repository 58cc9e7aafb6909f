package graphs

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
	"github.com/gpuactor/gpuactor/streams"
)

// Recorder is what a Record function queues its work through. Everything queued on Stream is
// captured; launches made with Recorder.Launch get a Slot, through which Template.Launch gives
// them new arguments at every replay.
type Recorder struct {
	c     *Capturing
	mu    sync.Mutex
	slots []recorded
}

type recorded struct {
	h    backend.GraphNode
	spec core.LaunchSpec
}

// Slot names a launch recorded with Recorder.Launch, in the order they were made (0, 1, …).
type Slot int

// Stream is the recording stream: queue the pipeline's copies, memsets and event waits on it
// (or on streams that wait on events recorded on it, and that it waits on in turn).
func (r *Recorder) Stream() *streams.Stream {
	if r == nil {
		return nil
	}
	return r.c.s
}

// Launch records a launch of k on the recording stream and returns its Slot. The arguments are
// checked as for any launch; they are the ones replays use until Template.Launch rebinds them.
func (r *Recorder) Launch(ctx context.Context, k *device.Kernel, cfg cuda.LaunchConfig, args ...any) (Slot, error) {
	if r == nil {
		return -1, invalid("Launch on a nil recorder")
	}
	dev := r.c.s.Device()
	spec, err := core.PrepareLaunch(coreDev(dev), (*core.Kernel)(k), cfg, args)
	if err != nil {
		return -1, err
	}
	h, err := core.RunOn(ctx, coreStream(r.c.s), func(rt backend.Device, _ *core.Tracker, h backend.Stream) (backend.GraphNode, error) {
		if r.c.ended.Load() {
			return 0, invalid("Recorder.Launch after its recording ended")
		}
		if err := spec.Enqueue(rt, h); err != nil {
			return 0, err
		}
		// The launch just captured is now the only node the stream's next work depends on.
		info, err := rt.StreamCaptureInfo(h)
		if err != nil {
			return 0, err
		}
		if info.Status != backend.CaptureActive || len(info.Deps) != 1 {
			return 0, fmt.Errorf("%w: the recording stream's capture is %v with %d tail nodes after a launch", ErrCapture, info.Status, len(info.Deps))
		}
		return info.Deps[0], nil
	}).Await(ctx)
	if err != nil {
		return -1, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.slots = append(r.slots, recorded{h: h, spec: spec})
	return Slot(len(r.slots) - 1), nil
}

// HostFunc records fn to run at every replay when the stream reaches it, on a goroutine of its
// own; a panic in fn becomes the error of that replay's future.
func (r *Recorder) HostFunc(ctx context.Context, fn func()) error {
	if r == nil {
		return invalid("HostFunc on a nil recorder")
	}
	if fn == nil {
		return invalid("HostFunc of a nil function")
	}
	_, err := core.RunOn(ctx, coreStream(r.c.s), func(rt backend.Device, _ *core.Tracker, h backend.Stream) (struct{}, error) {
		if r.c.ended.Load() {
			return struct{}{}, invalid("Recorder.HostFunc after its recording ended")
		}
		return struct{}{}, rt.LaunchHostFunc(h, hostFunc(r.c.res, fn))
	}).Await(ctx)
	return err
}

// Template is a recorded pipeline, instantiated and ready to replay: Launch rebinds the
// arguments of recorded launches and runs the whole graph, at graph speed, without graph code.
// It is safe for concurrent use: each Launch's rebinding and launch happen together on the
// device's actor thread, so concurrent replays never see each other's arguments.
type Template struct {
	g     *Graph
	x     *Exec
	slots []*Node
}

// Record captures what fn queues through r on s once, instantiates it (with opts) and returns
// the Template that replays it. fn runs once; its Go code is not part of the replays, only the
// GPU work (and host functions) it queued. If fn fails, nothing is left behind.
func Record(ctx context.Context, s *streams.Stream, fn func(ctx context.Context, r *Recorder) error, opts ...InstantiateOption) (*Template, error) {
	if fn == nil {
		return nil, invalid("Record of a nil function")
	}
	c, err := BeginCapture(ctx, s, WithMode(ThreadLocal))
	if err != nil {
		return nil, err
	}
	r := &Recorder{c: c}
	g, err := c.run(ctx, func(ctx context.Context) error { return fn(ctx, r) })
	if err != nil {
		return nil, err
	}
	t := &Template{g: g}
	for _, sl := range r.slots {
		spec := sl.spec
		t.slots = append(t.slots, g.remember(sl.h, KernelNode, spec.Kernel().Name(), &spec))
	}
	if t.x, err = g.Instantiate(ctx, opts...); err != nil {
		return nil, errors.Join(err, g.Close(context.WithoutCancel(ctx)))
	}
	return t, nil
}

// Bind gives a recorded launch new arguments for a replay.
type Bind struct {
	slot Slot
	args []any
}

// Args binds slot's launch to args (the same kernel and shape; args as for any launch).
// Bindings persist: a replay that does not rebind a slot uses its latest arguments.
func Args(slot Slot, args ...any) Bind { return Bind{slot: slot, args: args} }

// Slots is the number of recorded launches (0 for a nil template).
func (t *Template) Slots() int {
	if t == nil {
		return 0
	}
	return len(t.slots)
}

// Graph is the recorded graph (to inspect it; changing it does not change the replays); nil
// for a nil template.
func (t *Template) Graph() *Graph {
	if t == nil {
		return nil
	}
	return t.g
}

// Exec is the instantiated graph the template replays (nil for a nil template).
func (t *Template) Exec() *Exec {
	if t == nil {
		return nil
	}
	return t.x
}

// Launch rebinds the given slots and replays the pipeline on s (a stream of the recording
// device). The future completes when the replay has run on the GPU. A bad binding (unknown
// slot, arguments that do not fit the kernel) fails before anything changes.
func (t *Template) Launch(ctx context.Context, s *streams.Stream, binds ...Bind) *streams.Future {
	if t == nil {
		return failed(invalid("Launch of a nil template"))
	}
	type rebind struct {
		n    *Node
		spec core.LaunchSpec
	}
	var rb []rebind
	for _, b := range binds {
		if b.slot < 0 || int(b.slot) >= len(t.slots) {
			return failed(invalid("slot %d does not exist: the template has %d recorded launches", b.slot, len(t.slots)))
		}
		n := t.slots[b.slot]
		spec, err := core.PrepareLaunch(coreDev(t.x.dev), n.spec.Kernel(), n.spec.Config(), b.args)
		if err != nil {
			return failed(err)
		}
		rb = append(rb, rebind{n, spec})
	}
	return t.x.launchOn(ctx, s, func(rt backend.Device, h backend.Stream) error {
		if err := t.x.res.heldAlive(); err != nil {
			return err
		}
		for _, r := range rb {
			if err := t.x.setKernel(rt, r.n, r.spec); err != nil {
				return err
			}
		}
		if err := rt.GraphLaunch(t.x.h, h); err != nil {
			return fmt.Errorf("gpuactor/graphs: replaying a template: %w", err)
		}
		return nil
	})
}

// Close destroys the template's graph and executable graph, and returns once they are
// destroyed; replays already queued run.
func (t *Template) Close(ctx context.Context) error {
	if t == nil {
		return invalid("Close of a nil template")
	}
	return errors.Join(t.x.Close(ctx), t.g.Close(ctx))
}
