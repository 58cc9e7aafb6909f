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
	source *Graph // the graph this one is a Clone of (NodeInClone)

	mu     sync.Mutex
	nodes  map[backend.GraphNode]*Node
	body   *body  // set on a conditional node's body graph (conditional.go)
	parent *Graph // a graph a child node embeds (Node.ChildGraph): the parent's, never destroyed here
}

// resources is what a graph's nodes point at outside the runtime: pinned host memory of
// staged copies, and the panics of host nodes. Clones and executable graphs share a graph's
// resources, so they are reference-counted: released when the last holder is destroyed.
// Counted on the actor thread only.
//
// A graph that takes another as a child (or an Exec updated from another graph) holds the
// pinned blocks the other has at that moment, each block counting its holders: the runtime
// copies the child then, so later nodes of the child are not the parent's concern. Holding
// blocks rather than the other graph's resources means that two graphs made each other's
// child hold no cycle, and their memory is freed when both are destroyed. For host-node
// panics a graph still remembers the others it took (children), uncounted.
type resources struct {
	refs     int
	pinned   []*pinnedMem // the blocks this holds a reference to: its own and those it took
	mu       sync.Mutex   // guards children, which launches read from their callers' goroutines
	children []*resources
	panicked atomic.Pointer[actor.PanicError]
	hosts    atomic.Bool // the graph has host nodes of gpuactor's: launches check panicked
	peers    []func()    // releases of other devices' buffers its copy nodes use (peercopy.go)
	held     []held      // objects its nodes use by handle, checked at each launch (hold.go)
}

// pinnedMem is a block of pinned staging memory with the number of resources holding it;
// freed when the last lets go. Actor thread only.
type pinnedMem struct {
	p    unsafe.Pointer
	refs int
}

// anyHosts reports whether the graph or a child has host nodes whose panics are reported.
func (r *resources) anyHosts() bool {
	return r.hosts.Load() || r.some(func(c *resources) bool { return c.hosts.Load() })
}

// some reports whether f holds for a resources r took, directly or through others, visiting
// each once: the graphs taken can form cycles (two graphs each made the other's child), and
// each node's lock is held only while its list is read.
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

// addPinned makes r the first holder of a new block; on the actor thread.
func (r *resources) addPinned(p unsafe.Pointer) {
	r.pinned = append(r.pinned, &pinnedMem{p: p, refs: 1})
}

// release drops a reference and, with the last, lets go of the blocks r holds, freeing those
// nobody else holds; on the actor thread.
func (r *resources) release(rt backend.Device) error {
	if r.refs--; r.refs > 0 {
		return nil
	}
	var errs []error
	for _, m := range r.pinned {
		if m.refs--; m.refs == 0 {
			errs = append(errs, rt.HostFree(m.p))
			m.p = nil
		}
	}
	r.pinned = nil
	for _, release := range r.peers {
		release()
	}
	r.peers = nil
	r.held = nil
	r.mu.Lock()
	r.children = nil
	r.mu.Unlock()
	return errors.Join(errs...)
}

// hold makes r keep the blocks c holds now (a child graph's, or an update's) until r is
// released, and remember c for its host nodes' panics. Holding itself (an Exec updated from
// its own graph or a clone, which share resources) or what it already holds changes nothing,
// so an Exec updated per request does not grow. On the actor thread.
func (r *resources) hold(c *resources) {
	if c == r {
		return
	}
	r.holdAll(c)
	for _, m := range c.pinned {
		if !slices.Contains(r.pinned, m) {
			m.refs++
			r.pinned = append(r.pinned, m)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !slices.Contains(r.children, c) {
		r.children = append(r.children, c)
	}
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
	if g != nil && g.body != nil {
		return g.body.refuseClose()
	}
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
	g.closeBodies()
	err := rt.GraphDestroy(g.h)
	return errors.Join(err, g.res.release(rt))
}

// Clone copies the graph. The copy's nodes are new nodes (Nodes lists them).
func (g *Graph) Clone(ctx context.Context) (*Graph, error) {
	if g == nil {
		return nil, invalid("nil graph")
	}
	return core.Make(ctx, coreDev(g.dev), func(rt backend.Device, tr *core.Tracker) (*Graph, error) {
		if err := g.readable("graph"); err != nil {
			return nil, err
		}
		h, err := rt.GraphClone(g.h)
		if err != nil {
			return nil, fmt.Errorf("gpuactor/graphs: cloning a graph: %w", err)
		}
		c := adopt(g.dev, rt, tr, h, g.res)
		c.source = g
		return c, nil
	}, dropGraph)
}

// dropGraph destroys a graph made for a caller who left; on the actor thread.
func dropGraph(rt backend.Device, tr *core.Tracker, g *Graph) {
	tr.Disown(g)
	_ = g.destroy(rt)
}
