package graphs

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
	"github.com/gpuactor/gpuactor/streams"
)

// Exec is an instantiated graph, launchable on any stream of its device. Its methods are safe
// for concurrent use; parameter changes apply to launches queued after them.
type Exec struct {
	dev    *device.Device
	h      backend.GraphExec
	res    *resources
	closed atomic.Bool

	mu      sync.Mutex
	sources map[*Graph]bool // graphs whose nodes name this Exec's nodes: its own, and updates'

	runCost atomic.Int64 // ns a run's launch took in the last LaunchN message (chunkSize)
	chunk   int          // runs a LaunchN message queues, when a benchmark sets it (SetLaunchChunk)
}

// InstantiateOption configures Instantiate.
type InstantiateOption func(*instConfig)

type instConfig struct {
	flags  uint64
	upload *streams.Stream
}

// AutoFreeOnLaunch lets the Exec launch again while memory its allocation nodes made in an
// earlier launch is still unfreed: that memory is freed first.
func AutoFreeOnLaunch() InstantiateOption {
	return func(c *instConfig) { c.flags |= backend.InstantiateAutoFreeOnLaunch }
}

// Upload uploads the Exec on s right after instantiating it, so that the first launch does
// not pay for it.
func Upload(s *streams.Stream) InstantiateOption { return func(c *instConfig) { c.upload = s } }

// DeviceLaunch makes the Exec launchable from device code (kernel, copy, memset and empty
// nodes only; another kind fails Instantiate with an *InstantiateError naming the node).
// gpuactor itself does not launch graphs from kernels: that needs -rdc and libcudadevrt
// linking, which its NVRTC path does not do (docs/runtime-api/graph-G.md).
func DeviceLaunch() InstantiateOption {
	return func(c *instConfig) { c.flags |= backend.InstantiateDeviceLaunch }
}

// UseNodePriority runs kernel nodes at their own priority attributes rather than the launch
// stream's.
func UseNodePriority() InstantiateOption {
	return func(c *instConfig) { c.flags |= backend.InstantiateUseNodePriority }
}

// Instantiate makes an executable graph of g.
func (g *Graph) Instantiate(ctx context.Context, opts ...InstantiateOption) (*Exec, error) {
	var c instConfig
	for _, o := range opts {
		o(&c)
	}
	if c.upload != nil && g != nil && c.upload.Device() != g.dev {
		return nil, wrongDevice("upload stream", c.upload.Device(), g.dev)
	}
	if g == nil {
		return nil, invalid("nil graph")
	}
	x, err := core.Make(ctx, coreDev(g.dev), func(rt backend.Device, tr *core.Tracker) (*Exec, error) {
		if err := g.readable("graph"); err != nil {
			return nil, err
		}
		h, err := g.instantiate(rt, c.flags)
		if err != nil {
			return nil, err
		}
		x := &Exec{dev: g.dev, h: h, res: g.res.retain(), sources: map[*Graph]bool{g: true}}
		tr.Own(x, func() error { return x.destroy(rt) })
		return x, nil
	}, func(rt backend.Device, tr *core.Tracker, x *Exec) {
		tr.Disown(x)
		_ = x.destroy(rt)
	})
	if err != nil || c.upload == nil {
		return x, err
	}
	if _, err := x.Upload(ctx, c.upload).Await(ctx); err != nil {
		return nil, errors.Join(err, x.Close(context.WithoutCancel(ctx)))
	}
	return x, nil
}

// Device is the device the Exec belongs to.
func (x *Exec) Device() *device.Device {
	if x == nil {
		return nil
	}
	return x.dev
}

func (x *Exec) alive() error {
	if x.closed.Load() {
		return closed("executable graph")
	}
	return nil
}

// onStream checks s and runs op with its handle, tracked: the future completes when the GPU
// has passed op's work.
func (x *Exec) onStream(ctx context.Context, s *streams.Stream, op func(rt backend.Device, h backend.Stream) error) *streams.Future {
	return x.queue(ctx, s, op, nil)
}

// queue is onStream; then, when set, turns the GPU's result into the future's
// (core.Tracking.Then).
func (x *Exec) queue(ctx context.Context, s *streams.Stream, op func(rt backend.Device, h backend.Stream) error, then func(error) error) *streams.Future {
	if err := x.usableOn(s); err != nil {
		return actor.Completed(struct{}{}, err)
	}
	run := func(rt backend.Device, _ *core.Tracker, h backend.Stream) error {
		if err := x.alive(); err != nil {
			return err
		}
		return op(rt, h)
	}
	return core.QueueTracked(ctx, coreStream(s), run, core.Tracking{Then: then})
}

// usableOn checks that x and s are there and s is of x's device.
func (x *Exec) usableOn(s *streams.Stream) error {
	if x == nil || s == nil {
		return invalid("nil executable graph or stream")
	}
	if s.Device() != x.dev {
		return wrongDevice("stream", s.Device(), x.dev)
	}
	return nil
}

// Launch queues one run of the graph on s. The future completes when the graph has run, with
// the panic of a host node (*actor.PanicError) if one panicked. A panic is reported once, by
// the first launch of the Exec to complete after it: launches complete in batches, so that may
// be one queued before the run that panicked, never one queued after it.
func (x *Exec) Launch(ctx context.Context, s *streams.Stream) *streams.Future {
	if err := x.usableOn(s); err != nil {
		return actor.Completed(struct{}{}, err)
	}
	o := &launchOp{x: x}
	var t core.Tracking
	if x.res.anyHosts() {
		t.Then = x.reportPanic
	}
	return core.Submit(ctx, coreStream(s), &o.Msg, o, t)
}

// launchOp is a launch of an Exec: graphs are how work goes below the per-launch floor, so
// their launch is one object (core.Msg says why).
type launchOp struct {
	core.Msg
	x *Exec
}

func (o *launchOp) Enqueue(rt backend.Device, _ *core.Tracker, h backend.Stream) error {
	if err := o.x.launchable(); err != nil {
		return err
	}
	if err := rt.GraphLaunch(o.x.h, h); err != nil {
		return fmt.Errorf("gpuactor/graphs: launching a graph: %w", err)
	}
	return nil
}

// launchOn queues op, a launch of the Exec, on s, reporting host nodes' panics as Launch does.
func (x *Exec) launchOn(ctx context.Context, s *streams.Stream, op func(rt backend.Device, h backend.Stream) error) *streams.Future {
	if x == nil || !x.res.anyHosts() {
		return x.onStream(ctx, s, op)
	}
	return x.queue(ctx, s, op, x.reportPanic)
}

// reportPanic is the result of a launch that ended with err: a host node's panic, when one
// panicked and nothing else went wrong. On the actor thread.
func (x *Exec) reportPanic(err error) error {
	if p := x.res.takePanic(); err == nil && p != nil {
		return p
	}
	return err
}

// Upload uploads the graph's resources to the device ahead of its first launch, ordered on s.
func (x *Exec) Upload(ctx context.Context, s *streams.Stream) *streams.Future {
	return x.onStream(ctx, s, func(rt backend.Device, h backend.Stream) error { return rt.GraphUpload(x.h, h) })
}

// run runs op on the Exec's actor thread, refusing a destroyed Exec.
func (x *Exec) run(ctx context.Context, op func(rt backend.Device, tr *core.Tracker) error) error {
	if x == nil {
		return invalid("nil executable graph")
	}
	_, err := core.Run(ctx, coreDev(x.dev), func(rt backend.Device, tr *core.Tracker) (struct{}, error) {
		if err := x.alive(); err != nil {
			return struct{}{}, err
		}
		return struct{}{}, op(rt, tr)
	}).Await(ctx)
	return err
}

// member checks that n is a node of a graph this Exec was made or updated from.
func (x *Exec) member(n *Node) error {
	if n == nil {
		return invalid("nil node")
	}
	if n.destroyed.Load() {
		return fmt.Errorf("%w: %s", ErrNodeDestroyed, n)
	}
	x.mu.Lock()
	ok := x.sources[n.g]
	x.mu.Unlock()
	if !ok {
		return fmt.Errorf("%w: %s is not a node of the graph this executable graph was made from", ErrForeignNode, n)
	}
	return nil
}

// SetKernelArgs gives kernel node n new arguments for later launches; the kernel and shape
// stay. n must be a kernel node added with AddKernel or Recorder.Launch.
func (x *Exec) SetKernelArgs(ctx context.Context, n *Node, args ...any) error {
	if err := x.member(n); err != nil {
		return err
	}
	n.g.mu.Lock() // Node.SetKernel may change it
	spec := n.spec
	n.g.mu.Unlock()
	if spec == nil {
		return invalid("%s has no known kernel: only nodes of AddKernel and Recorder.Launch take new arguments", n)
	}
	return x.SetKernel(ctx, n, (*device.Kernel)(spec.Kernel()), spec.Config(), args...)
}

// SetKernel makes kernel node n launch k with cfg and args in later launches.
func (x *Exec) SetKernel(ctx context.Context, n *Node, k *device.Kernel, cfg cuda.LaunchConfig, args ...any) error {
	if err := x.member(n); err != nil {
		return err
	}
	if n.kind != KernelNode {
		return invalid("%s is not a kernel node", n)
	}
	spec, err := core.PrepareLaunch(coreDev(x.dev), (*core.Kernel)(k), cfg, args)
	if err != nil {
		return err
	}
	return x.run(ctx, func(rt backend.Device, _ *core.Tracker) error { return x.setKernel(rt, n, spec) })
}

func (x *Exec) setKernel(rt backend.Device, n *Node, spec core.LaunchSpec) error {
	p, err := spec.Node(rt)
	if err != nil {
		return err
	}
	if err := rt.GraphExecKernelNodeSetParams(x.h, n.h, p); err != nil {
		return fmt.Errorf("gpuactor/graphs: setting %s's parameters: %w", n, err)
	}
	return nil
}

// SetEnabled enables or disables node n (a kernel, copy or memset node) in later launches; a
// disabled node does nothing, its dependencies still hold.
func (x *Exec) SetEnabled(ctx context.Context, n *Node, enabled bool) error {
	if err := x.member(n); err != nil {
		return err
	}
	return x.run(ctx, func(rt backend.Device, _ *core.Tracker) error { return rt.GraphNodeSetEnabled(x.h, n.h, enabled) })
}

// Update takes g's node parameters into the Exec for later launches. g must have the Exec's
// topology: the same nodes, of the same kinds, with the same dependencies. Otherwise nothing
// changes and the error is an *UpdateError saying what differs.
func (x *Exec) Update(ctx context.Context, g *Graph) error {
	if g == nil {
		return invalid("Update from a nil graph")
	}
	if g.dev != x.dev {
		return wrongDevice("graph", g.dev, x.dev)
	}
	return x.run(ctx, func(rt backend.Device, _ *core.Tracker) error {
		if err := g.readable("graph"); err != nil {
			return err
		}
		info, err := rt.GraphExecUpdate(x.h, g.h)
		if err != nil || info.Result != backend.UpdateSuccess {
			if err == nil {
				err = &cudaerr.Error{Op: "cudaGraphExecUpdate", Code: cudaerr.GraphExecUpdateFailure, Message: info.Result.String()}
			}
			ue := &UpdateError{Reason: info.Result.String(), Err: err}
			if info.ErrorNode != 0 {
				ue.Node, _ = g.node(rt, info.ErrorNode)
			}
			return ue
		}
		x.mu.Lock()
		x.sources[g] = true
		x.mu.Unlock()
		x.res.hold(g.res) // its host memory may be read now
		return nil
	})
}

// Close destroys the Exec and returns once it is destroyed; launches already queued still run.
// Closing twice is a device.ErrClosed error.
func (x *Exec) Close(ctx context.Context) error {
	return x.run(ctx, func(rt backend.Device, tr *core.Tracker) error {
		tr.Disown(x)
		return x.destroy(rt)
	})
}

func (x *Exec) destroy(rt backend.Device) error {
	x.closed.Store(true)
	return errors.Join(rt.GraphExecDestroy(x.h), x.res.release(rt))
}
