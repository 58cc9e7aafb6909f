package graphs

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
)

// Graph is a CUDA graph of one device: nodes and their dependencies, not yet runnable
// (Instantiate makes an Exec). Its methods are safe for concurrent use; they run on the
// device's actor thread.
type Graph struct {
	dev    *device.Device
	h      backend.Graph
	res    *resources
	closed atomic.Bool

	mu    sync.Mutex
	nodes map[backend.GraphNode]*Node

	parent *Graph // a graph a child node embeds (Node.ChildGraph): the parent's, never destroyed here
}

// resources is what a graph's nodes point at outside the runtime: pinned host memory of
// staged copies, and the panics of host nodes. Clones, executable graphs and parents (a
// child node copies its graph) share them, so they are reference-counted: freed when the last
// holder is destroyed. Counted on the actor thread only.
type resources struct {
	refs     int
	pinned   []unsafe.Pointer
	mu       sync.Mutex // guards children, which launches read from their callers' goroutines
	children []*resources
	panicked atomic.Pointer[actor.PanicError]
	hosts    atomic.Bool // the graph has host nodes of gpuactor's: launches check panicked
	peers    []func()    // releases of other devices' buffers its copy nodes use (peercopy.go)
}

// anyHosts reports whether the graph or a child has host nodes whose panics are reported.
func (r *resources) anyHosts() bool {
	return r.hosts.Load() || r.some(func(c *resources) bool { return c.hosts.Load() })
}

// some reports whether f holds for a resources r holds, directly or through others, visiting
// each once: holds can form cycles (two graphs each made the other's child), and each node's
// lock is held only while its list is read.
func (r *resources) some(f func(*resources) bool) bool {
	r.mu.Lock()
	stack := slices.Clone(r.children)
	r.mu.Unlock()
	if len(stack) == 0 {
		return false
	}
	seen := map[*resources]bool{r: true}
	for len(stack) > 0 {
		c := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[c] {
			continue
		}
		seen[c] = true
		if f(c) {
			return true
		}
		c.mu.Lock()
		stack = append(stack, c.children...)
		c.mu.Unlock()
	}
	return false
}

func (r *resources) retain() *resources { r.refs++; return r }

// release drops a reference and frees what nobody holds any more; on the actor thread.
func (r *resources) release(rt backend.Device) error {
	if r.refs--; r.refs > 0 {
		return nil
	}
	var errs []error
	for _, p := range r.pinned {
		errs = append(errs, rt.HostFree(p))
	}
	r.pinned = nil
	for _, release := range r.peers {
		release()
	}
	r.peers = nil
	r.mu.Lock()
	children := r.children
	r.children = nil
	r.mu.Unlock()
	for _, c := range children {
		errs = append(errs, c.release(rt))
	}
	return errors.Join(errs...)
}

// hold makes r keep c (a child graph's, or an update's) until r is released. Holding itself
// (an Exec updated from its own graph or a clone, which share resources) or what it already
// holds changes nothing, so an Exec updated per request does not grow.
func (r *resources) hold(c *resources) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c == r || slices.Contains(r.children, c) {
		return
	}
	r.children = append(r.children, c.retain())
}

// takePanic returns and clears the first panic of a host node of the graph or its children.
func (r *resources) takePanic() *actor.PanicError {
	p := r.panicked.Swap(nil)
	if p == nil {
		r.some(func(c *resources) bool {
			p = c.panicked.Swap(nil)
			return p != nil
		})
	}
	return p
}

// New makes an empty graph on dev.
func New(ctx context.Context, dev *device.Device) (*Graph, error) {
	if dev == nil {
		return nil, invalid("New on a nil device")
	}
	return core.Make(ctx, coreDev(dev), func(rt backend.Device, tr *core.Tracker) (*Graph, error) {
		h, err := rt.GraphCreate()
		if err != nil {
			return nil, fmt.Errorf("gpuactor/graphs: creating a graph: %w", err)
		}
		return adopt(dev, rt, tr, h, nil), nil
	}, dropGraph)
}

// adopt wraps a graph handle the caller owns; on the actor thread.
func adopt(dev *device.Device, rt backend.Device, tr *core.Tracker, h backend.Graph, res *resources) *Graph {
	if res == nil {
		res = &resources{}
	}
	g := &Graph{dev: dev, h: h, res: res.retain(), nodes: map[backend.GraphNode]*Node{}}
	tr.Own(g, func() error { return g.destroy(rt) })
	return g
}

// Device is the device the graph belongs to.
func (g *Graph) Device() *device.Device {
	if g == nil {
		return nil
	}
	return g.dev
}

// exec runs op on the graph's actor thread, refusing a destroyed graph.
func exec[T any](ctx context.Context, g *Graph, op func(rt backend.Device, tr *core.Tracker) (T, error)) (T, error) {
	var zero T
	if g == nil {
		return zero, invalid("nil graph")
	}
	return core.Run(ctx, coreDev(g.dev), func(rt backend.Device, tr *core.Tracker) (T, error) {
		if g.closed.Load() || g.parent != nil && g.parent.closed.Load() {
			return zero, closed("graph")
		}
		return op(rt, tr)
	}).Await(ctx)
}

// Close destroys the graph and returns once it is destroyed. Executable graphs made from it
// stay valid. Closing twice is a device.ErrClosed error.
func (g *Graph) Close(ctx context.Context) error {
	if g != nil && g.parent != nil {
		return invalid("Close of a graph a child node embeds: it lives as long as its node")
	}
	_, err := exec(ctx, g, func(rt backend.Device, tr *core.Tracker) (struct{}, error) {
		tr.Disown(g)
		return struct{}{}, g.destroy(rt)
	})
	return err
}

func (g *Graph) destroy(rt backend.Device) error {
	g.closed.Store(true)
	err := rt.GraphDestroy(g.h)
	return errors.Join(err, g.res.release(rt))
}

// Clone copies the graph. The copy's nodes are new nodes (Nodes lists them).
func (g *Graph) Clone(ctx context.Context) (*Graph, error) {
	if g == nil {
		return nil, invalid("nil graph")
	}
	return core.Make(ctx, coreDev(g.dev), func(rt backend.Device, tr *core.Tracker) (*Graph, error) {
		if g.closed.Load() {
			return nil, closed("graph")
		}
		h, err := rt.GraphClone(g.h)
		if err != nil {
			return nil, fmt.Errorf("gpuactor/graphs: cloning a graph: %w", err)
		}
		return adopt(g.dev, rt, tr, h, g.res), nil
	}, dropGraph)
}

// dropGraph destroys a graph made for a caller who left; on the actor thread.
func dropGraph(rt backend.Device, tr *core.Tracker, g *Graph) {
	tr.Disown(g)
	_ = g.destroy(rt)
}
