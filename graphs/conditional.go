package graphs

import (
	"context"
	"errors"
	"fmt"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
)

// ConditionalNode is the kind of if, if/else, while and switch nodes.
const ConditionalNode = Kind(backend.NodeConditional)

// ConditionalDecls declares, for kernel source compiled at run time (device.Compile, which has
// no cuda_runtime.h), what a kernel needs to set a condition: the cudaGraphConditionalHandle
// type and the device function cudaGraphSetConditional(handle, value), as the CUDA headers
// declare them. Put it before the kernels that use them.
const ConditionalDecls = `typedef unsigned long long cudaGraphConditionalHandle;
extern "C" __device__ void cudaGraphSetConditional(cudaGraphConditionalHandle handle, unsigned int value);
`

// ErrForeignCondition: a Condition of one graph used in a graph that is neither it nor one of
// its conditional bodies.
var ErrForeignCondition = errors.New("gpuactor/graphs: condition belongs to another graph")

// Condition is a conditional variable of a graph (cudaGraphConditionalHandle): the value its
// conditional nodes, and those of its bodies, read to pick what runs. Kernels of the graph set
// it on the GPU with cudaGraphSetConditional(handle, value), taking Handle as a
// cudaGraphConditionalHandle argument; a simulated kernel sets it with cuda.SimSetConditional.
// Each executable graph has its own copy of the variable.
type Condition struct {
	g          *Graph
	h          backend.ConditionalHandle
	def        uint32
	setDefault bool
	node       *Node // the conditional node it drives; set on the actor thread
}

// Handle is the value kernels take to set the condition.
func (c *Condition) Handle() cuda.ConditionalHandle {
	if c == nil {
		return 0
	}
	return c.h
}

// Graph is the graph the condition was made on.
func (c *Condition) Graph() *Graph {
	if c == nil {
		return nil
	}
	return c.g
}

// String describes the condition, e.g. "condition 0x7f… (default 1 at each launch)".
func (c *Condition) String() string {
	if c == nil {
		return "<nil condition>"
	}
	if !c.setDefault {
		return fmt.Sprintf("condition %#x", uint64(c.h))
	}
	return fmt.Sprintf("condition %#x (default %d at each launch)", uint64(c.h), c.def)
}

// ConditionOption configures a condition.
type ConditionOption func(*Condition)

// Default gives the condition the value v at the start of every launch
// (cudaGraphCondAssignDefault). Without it the value is undefined until a kernel sets it, so
// a kernel upstream of the conditional node must.
func Default(v uint32) ConditionOption {
	return func(c *Condition) { c.def, c.setDefault = v, true }
}

// NewCondition makes a conditional variable of g, for conditional nodes of g and of its
// bodies. It returns once the variable exists. Runtimes before CUDA 12.3 do not have them.
func (g *Graph) NewCondition(ctx context.Context, opts ...ConditionOption) (*Condition, error) {
	c := &Condition{g: g}
	for _, o := range opts {
		o(c)
	}
	var flags uint32
	if c.setDefault {
		flags = backend.CondAssignDefault
	}
	h, err := exec(ctx, g, func(rt backend.Device, _ *core.Tracker) (backend.ConditionalHandle, error) {
		h, err := rt.GraphConditionalHandleCreate(g.h, c.def, flags)
		if err != nil {
			return 0, fmt.Errorf("gpuactor/graphs: making a condition: %w", err)
		}
		return h, nil
	})
	if err != nil {
		return nil, err
	}
	c.h = h
	return c, nil
}

// body is what a conditional node's body graph knows of its place: the node and its graph.
type body struct {
	node   *Node
	parent *Graph
}

func (b *body) refuseClose() error {
	return invalid("Close of a conditional body (of %s): bodies are destroyed with the graph that holds their node", b.node)
}

// closeBodies marks the bodies of g's conditional nodes closed, at any depth, as g is
// destroyed: the runtime destroys them with it.
func (g *Graph) closeBodies() {
	g.mu.Lock()
	var bodies []*Graph
	for _, n := range g.nodes {
		bodies = append(bodies, n.bodies...)
	}
	g.mu.Unlock()
	for _, b := range bodies {
		b.closed.Store(true)
		b.closeBodies()
	}
}

// Body reports whether g is the body of a conditional node, and that node.
func (g *Graph) Body() (*Node, bool) {
	if g == nil || g.body == nil {
		return nil, false
	}
	return g.body.node, true
}

// scoped checks that c may be used in g: made on g or on a graph g is a body of.
func (c *Condition) scoped(g *Graph) error {
	if c == nil {
		return invalid("nil condition")
	}
	for x := g; x != nil; {
		if x == c.g {
			return nil
		}
		if x.body == nil {
			break
		}
		x = x.body.parent
	}
	return fmt.Errorf("%w: %s was made on another graph than the one its node is added to (or one that holds it)", ErrForeignCondition, c)
}

// addConditional adds a conditional node of type typ with size bodies after deps.
func (g *Graph) addConditional(ctx context.Context, deps Deps, c *Condition, typ backend.CondType, size uint32) (*Node, []*Graph, error) {
	if g == nil {
		return nil, nil, invalid("nil graph")
	}
	if err := c.scoped(g); err != nil {
		return nil, nil, err
	}
	hs, err := deps.handles(g)
	if err != nil {
		return nil, nil, err
	}
	a, err := exec(ctx, g, func(rt backend.Device, _ *core.Tracker) (added, error) {
		return g.addConditionalOn(rt, hs, c, typ, size)
	})
	return a.n, a.bodies, err
}

type added struct {
	n      *Node
	bodies []*Graph
}

// addConditionalOn adds the node; on the actor thread.
func (g *Graph) addConditionalOn(rt backend.Device, hs []backend.GraphNode, c *Condition, typ backend.CondType, size uint32) (added, error) {
	if c.node != nil && !c.node.destroyed.Load() {
		return added{}, invalid("%s already drives %s: CUDA ties a condition to one conditional node; make another with NewCondition", c, c.node)
	}
	h, bs, err := rt.GraphAddNode(g.h, hs, backend.NodeParams{Type: backend.NodeConditional,
		Conditional: backend.ConditionalNode{Handle: c.h, Type: typ, Size: size}})
	if err != nil {
		return added{}, fmt.Errorf("gpuactor/graphs: adding a %s node: %w", typ, err)
	}
	n := g.remember(h, ConditionalNode, fmt.Sprintf("%s %#x", typ, uint64(c.h)), nil)
	c.node = n
	bodies := make([]*Graph, len(bs))
	for i, bh := range bs {
		bodies[i] = &Graph{dev: g.dev, h: bh, res: g.res, nodes: map[backend.GraphNode]*Node{}, body: &body{node: n, parent: g}}
	}
	g.mu.Lock()
	n.bodies = bodies
	g.mu.Unlock()
	return added{n, bodies}, nil
}

// Bodies are a conditional node's body graphs (nil for other nodes).
func (n *Node) Bodies() []*Graph {
	if n == nil {
		return nil
	}
	n.g.mu.Lock()
	defer n.g.mu.Unlock()
	return append([]*Graph(nil), n.bodies...)
}

// AddIf adds a node that runs body, once, when c is non-zero at the time the node runs. It
// returns once the node is added. The body is a graph of the node's own: build into it as into
// any graph (kernel, copy, memset, empty, child and conditional nodes only); it is destroyed
// with g, and its Close is refused.
func (g *Graph) AddIf(ctx context.Context, deps Deps, c *Condition) (n *Node, body *Graph, err error) {
	n, bodies, err := g.addConditional(ctx, deps, c, backend.CondIf, 1)
	if err != nil {
		return nil, nil, err
	}
	return n, bodies[0], nil
}

// AddIfElse adds a node that runs then when c is non-zero, els otherwise (CUDA 12.8+). The
// bodies are as AddIf's.
func (g *Graph) AddIfElse(ctx context.Context, deps Deps, c *Condition) (n *Node, then, els *Graph, err error) {
	n, bodies, err := g.addConditional(ctx, deps, c, backend.CondIf, 2)
	if err != nil {
		return nil, nil, nil, err
	}
	return n, bodies[0], bodies[1], nil
}

// AddWhile adds a node that runs body over and over while c is non-zero: checked when the node
// is reached and after every run of the body, so a kernel of the body clears c to end the
// loop. The body is as AddIf's.
func (g *Graph) AddWhile(ctx context.Context, deps Deps, c *Condition) (n *Node, body *Graph, err error) {
	n, bodies, err := g.addConditional(ctx, deps, c, backend.CondWhile, 1)
	if err != nil {
		return nil, nil, err
	}
	return n, bodies[0], nil
}

// AddSwitch adds a node with n bodies that runs bodies[v] when c is v < n, and nothing
// otherwise (CUDA 12.8+). The bodies are as AddIf's.
func (g *Graph) AddSwitch(ctx context.Context, deps Deps, c *Condition, n int) (*Node, []*Graph, error) {
	if g == nil {
		return nil, nil, invalid("nil graph")
	}
	if n <= 0 || n > 1<<16 {
		return nil, nil, invalid("a switch node of %d bodies", n)
	}
	return g.addConditional(ctx, deps, c, backend.CondSwitch, uint32(n))
}
