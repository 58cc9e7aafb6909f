package graphs

import (
	"context"
	"fmt"
	"runtime/debug"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
	"github.com/gpuactor/gpuactor/streams"
)

// add runs an op adding one node after deps; on the actor thread.
func (g *Graph) add(ctx context.Context, deps Deps, kind Kind, label string, spec *core.LaunchSpec,
	op func(rt backend.Device, deps []backend.GraphNode) (backend.GraphNode, error)) (*Node, error) {
	hs, err := deps.handles(g)
	if err != nil {
		return nil, err
	}
	return exec(ctx, g, func(rt backend.Device, _ *core.Tracker) (*Node, error) {
		h, err := op(rt, hs)
		if err != nil {
			return nil, fmt.Errorf("gpuactor/graphs: adding a %s node: %w", kind, err)
		}
		return g.remember(h, kind, label, spec), nil
	})
}

// AddKernel adds a launch of k with shape cfg and args (as streams.Stream.Launch takes them),
// and returns once the node is added.
// The arguments are checked now and copied into the graph: buffers passed must stay allocated
// while the graph may run.
func (g *Graph) AddKernel(ctx context.Context, deps Deps, k *device.Kernel, cfg cuda.LaunchConfig, args ...any) (*Node, error) {
	if g == nil {
		return nil, invalid("nil graph")
	}
	spec, err := core.PrepareLaunch(coreDev(g.dev), (*core.Kernel)(k), cfg, args)
	if err != nil {
		return nil, err
	}
	n, err := g.add(ctx, deps, KernelNode, k.Name(), &spec, func(rt backend.Device, hs []backend.GraphNode) (backend.GraphNode, error) {
		p, err := spec.Node(rt)
		if err != nil {
			return 0, err
		}
		return rt.GraphAddKernelNode(g.h, hs, p)
	})
	return g.known(n, err, func(n *Node) { n.args = args })
}

// AddCopy adds a copy of all of src into the start of dst, both device memory of g's device.
func (g *Graph) AddCopy(ctx context.Context, deps Deps, dst, src device.Mem) (*Node, error) {
	if g == nil {
		return nil, invalid("nil graph")
	}
	return g.add(ctx, deps, CopyNode, "device-to-device", nil, func(rt backend.Device, hs []backend.GraphNode) (backend.GraphNode, error) {
		dp, dn, err := coreDev(g.dev).Resolve("copy destination", dst)
		if err != nil {
			return 0, err
		}
		sp, sn, err := coreDev(g.dev).Resolve("copy source", src)
		if err != nil {
			return 0, err
		}
		if sn > dn {
			return 0, core.OutOfRange("copy of %d bytes into a %d-byte destination", sn, dn)
		}
		return rt.GraphAddCopyDtoD(g.h, hs, dp, sp, sn)
	})
}

// AddCopyToDevice adds a copy of the first Size(dst) bytes of pinned src into dst. The graph
// reads src at every launch: src must stay allocated while the graph may run.
func (g *Graph) AddCopyToDevice(ctx context.Context, deps Deps, dst device.Mem, src *device.HostBuffer) (*Node, error) {
	if g == nil {
		return nil, invalid("nil graph")
	}
	return g.add(ctx, deps, CopyNode, "host-to-device", nil, func(rt backend.Device, hs []backend.GraphNode) (backend.GraphNode, error) {
		p, n, err := coreDev(g.dev).Resolve("copy destination", dst)
		if err != nil {
			return 0, err
		}
		host, err := coreDev(g.dev).ResolveHost("copy source", (*core.HostBuffer)(src), n)
		if err != nil {
			return 0, err
		}
		return rt.GraphAddCopyHtoD(g.h, hs, p, host, n)
	})
}

// AddCopyFromDevice adds a copy of all of src into the start of pinned dst. The graph writes
// dst at every launch: dst must stay allocated while the graph may run.
func (g *Graph) AddCopyFromDevice(ctx context.Context, deps Deps, dst *device.HostBuffer, src device.Mem) (*Node, error) {
	if g == nil {
		return nil, invalid("nil graph")
	}
	return g.add(ctx, deps, CopyNode, "device-to-host", nil, func(rt backend.Device, hs []backend.GraphNode) (backend.GraphNode, error) {
		p, n, err := coreDev(g.dev).Resolve("copy source", src)
		if err != nil {
			return 0, err
		}
		host, err := coreDev(g.dev).ResolveHost("copy destination", (*core.HostBuffer)(dst), n)
		if err != nil {
			return 0, err
		}
		return rt.GraphAddCopyDtoH(g.h, hs, host, p, n)
	})
}

// AddMemset adds setting every byte of dst to value.
func (g *Graph) AddMemset(ctx context.Context, deps Deps, dst device.Mem, value byte) (*Node, error) {
	if g == nil {
		return nil, invalid("nil graph")
	}
	return g.add(ctx, deps, MemsetNode, fmt.Sprintf("%#x", value), nil, func(rt backend.Device, hs []backend.GraphNode) (backend.GraphNode, error) {
		p, n, err := coreDev(g.dev).Resolve("memset destination", dst)
		if err != nil {
			return 0, err
		}
		return rt.GraphAddMemsetNode(g.h, hs, p, value, n)
	})
}

// AddHost adds a Go function, run at every launch once its dependencies have finished; nodes
// after it wait until it returns. fn runs on a goroutine of its own, never on CUDA's thread;
// it must not wait for work queued after the graph's launch. A panic in fn becomes the error
// of the launch's future (*actor.PanicError).
func (g *Graph) AddHost(ctx context.Context, deps Deps, fn func()) (*Node, error) {
	if g == nil {
		return nil, invalid("nil graph")
	}
	if fn == nil {
		return nil, invalid("AddHost of a nil function")
	}
	return g.add(ctx, deps, HostNode, "", nil, func(rt backend.Device, hs []backend.GraphNode) (backend.GraphNode, error) {
		return rt.GraphAddHostNode(g.h, hs, hostFunc(g.res, fn))
	})
}

// hostFunc wraps fn for the backend's thread: run it on a goroutine, wait, keep its panic.
func hostFunc(res *resources, fn func()) func() {
	res.hosts.Store(true)
	return func() {
		finished := make(chan struct{})
		go func() {
			defer close(finished)
			defer func() {
				if r := recover(); r != nil {
					res.panicked.CompareAndSwap(nil, &actor.PanicError{Value: r, Stack: debug.Stack()})
				}
			}()
			fn()
		}()
		<-finished
	}
}

// AddChild adds a copy of child (of the same device) as one node. Later changes to child do
// not affect g.
func (g *Graph) AddChild(ctx context.Context, deps Deps, child *Graph) (*Node, error) {
	if g == nil || child == nil {
		return nil, invalid("AddChild with a nil graph")
	}
	if child.dev != g.dev {
		return nil, wrongDevice("child graph", child.dev, g.dev)
	}
	if child == g {
		return nil, invalid("a graph cannot be its own child")
	}
	return g.add(ctx, deps, ChildNode, "", nil, func(rt backend.Device, hs []backend.GraphNode) (backend.GraphNode, error) {
		if err := child.readable("child graph"); err != nil {
			return 0, err
		}
		n, err := rt.GraphAddChildNode(g.h, hs, child.h)
		if err == nil {
			g.res.hold(child.res)
		}
		return n, err
	})
}

// AddEmpty adds a node that does nothing: a join point for dependencies.
func (g *Graph) AddEmpty(ctx context.Context, deps Deps) (*Node, error) {
	if g == nil {
		return nil, invalid("nil graph")
	}
	return g.add(ctx, deps, EmptyNode, "", nil, func(rt backend.Device, hs []backend.GraphNode) (backend.GraphNode, error) {
		return rt.GraphAddEmptyNode(g.h, hs)
	})
}

// AddEventRecord adds recording e (an event of g's device) when the node runs. Once e is
// closed, launches of the graph's Execs are refused with device.ErrClosed (the runtime would
// use a destroyed event).
func (g *Graph) AddEventRecord(ctx context.Context, deps Deps, e *streams.Event) (*Node, error) {
	if g == nil || e == nil {
		return nil, invalid("AddEventRecord with a nil graph or event")
	}
	if e.Device() != g.dev {
		return nil, wrongDevice("event", e.Device(), g.dev)
	}
	n, err := g.add(ctx, deps, EventRecordNode, "", nil, func(rt backend.Device, hs []backend.GraphNode) (backend.GraphNode, error) {
		h, err := (*core.Event)(e).Handle()
		if err != nil {
			return 0, err
		}
		nh, err := rt.GraphAddEventRecordNode(g.h, hs, h)
		if err == nil {
			g.res.holdEvent(e, EventRecordNode)
		}
		return nh, err
	})
	return g.known(n, err, func(n *Node) { n.event = e })
}

// AddEventWait adds waiting for e's most recent record at launch time (e may belong to
// another device). Once e is closed, launches of the graph's Execs are refused with
// device.ErrClosed.
func (g *Graph) AddEventWait(ctx context.Context, deps Deps, e *streams.Event) (*Node, error) {
	if g == nil || e == nil {
		return nil, invalid("AddEventWait with a nil graph or event")
	}
	n, err := g.add(ctx, deps, EventWaitNode, "", nil, func(rt backend.Device, hs []backend.GraphNode) (backend.GraphNode, error) {
		h, err := (*core.Event)(e).Handle()
		if err != nil {
			return 0, err
		}
		nh, err := rt.GraphAddEventWaitNode(g.h, hs, h)
		if err == nil {
			g.res.holdEvent(e, EventWaitNode)
		}
		return nh, err
	})
	return g.known(n, err, func(n *Node) { n.event = e })
}

// AddAlloc adds an allocation of size bytes of device memory and returns its address, which
// stays the same for every launch. Nodes that use the memory must depend on the allocation;
// pass the address to kernels as a cuda.DevicePtr. Free it with AddFree in the same or a
// later graph; an executable graph whose allocation is not freed cannot launch again until it
// is, unless instantiated with AutoFreeOnLaunch.
func (g *Graph) AddAlloc(ctx context.Context, deps Deps, size uint64) (*Node, cuda.DevicePtr, error) {
	if g == nil {
		return nil, 0, invalid("nil graph")
	}
	if size == 0 {
		return nil, 0, invalid("AddAlloc of 0 bytes")
	}
	var p cuda.DevicePtr
	n, err := g.add(ctx, deps, AllocNode, fmt.Sprintf("%d bytes", size), nil, func(rt backend.Device, hs []backend.GraphNode) (backend.GraphNode, error) {
		n, ptr, err := rt.GraphAddMemAllocNode(g.h, hs, size)
		p = ptr
		return n, err
	})
	return n, p, err
}

// AddFree adds freeing p, the address an AddAlloc returned.
func (g *Graph) AddFree(ctx context.Context, deps Deps, p cuda.DevicePtr) (*Node, error) {
	if g == nil {
		return nil, invalid("nil graph")
	}
	if p == 0 {
		return nil, invalid("AddFree of a nil address")
	}
	return g.add(ctx, deps, FreeNode, fmt.Sprintf("%#x", uintptr(p)), nil, func(rt backend.Device, hs []backend.GraphNode) (backend.GraphNode, error) {
		return rt.GraphAddMemFreeNode(g.h, hs, p)
	})
}
