package graphs

import (
	"context"
	"reflect"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
)

// Semaphore is an external semaphore imported into a device: an *interop.ExternalSemaphore
// (interop.ImportSemaphore). graphs sits below interop and cannot name that type; any other
// value, or a closed semaphore, is refused when a node is given it.
type Semaphore interface {
	// Device is the device the semaphore is imported into.
	Device() *device.Device
}

// SemaphoreOp is one semaphore of a semaphore node and its value: a signal node sets a
// timeline semaphore's counter to Value, a wait node waits until the counter reaches Value;
// a binary semaphore ignores Value (signalled, or waited for and consumed).
type SemaphoreOp struct {
	Semaphore Semaphore
	Value     uint64
}

// semaphoreKinds are the kinds of node that signal or wait for semaphores.
var semaphoreKinds = []Kind{SemaphoreSignalNode, SemaphoreWaitNode}

// checkSemaphores checks ops for a node of a graph of dev, before anything is sent.
func checkSemaphores(dev *device.Device, ops []SemaphoreOp) error {
	if len(ops) == 0 {
		return invalid("a semaphore node needs at least one semaphore")
	}
	for i, op := range ops {
		if op.Semaphore == nil || op.Semaphore.Device() == nil {
			return invalid("semaphore %d is nil", i)
		}
		if !reflect.TypeOf(op.Semaphore).Comparable() {
			return invalid("semaphore %d is a %T, not an external semaphore", i, op.Semaphore)
		}
		if op.Semaphore.Device() != dev {
			return wrongDevice("external semaphore", op.Semaphore.Device(), dev)
		}
	}
	return nil
}

// semaphoreOps is ops as the runtime takes them; on the actor thread of dev. A semaphore that
// is not open on dev (closed, or not from interop.ImportSemaphore) is an ErrClosed error.
func semaphoreOps(dev *device.Device, ops []SemaphoreOp) ([]backend.SemaphoreOp, error) {
	reg := coreDev(dev).Semaphores()
	out := make([]backend.SemaphoreOp, len(ops))
	for i, op := range ops {
		h, ok := reg.Handle(op.Semaphore)
		if !ok {
			return nil, core.Closed("semaphore %d is not an open external semaphore of device %d (closed, or not made by interop.ImportSemaphore)", i, dev.Ordinal())
		}
		out[i] = backend.SemaphoreOp{Sem: h, Value: op.Value}
	}
	return out, nil
}

// holdSemaphores makes r's launches check that every semaphore of ops is still open, given to
// a node of kind k; on the actor thread of dev.
func (r *resources) holdSemaphores(dev *device.Device, ops []SemaphoreOp, k Kind) {
	reg := coreDev(dev).Semaphores()
	for _, op := range ops {
		sem := op.Semaphore
		r.keep(held{key: sem, what: "an external semaphore of a " + k.String() + " node", alive: func() error {
			if _, ok := reg.Handle(sem); !ok {
				return core.Closed("external semaphore used by a graph after its Close")
			}
			return nil
		}})
	}
}

// addSemaphores adds a node of kind k for ops after deps.
func (g *Graph) addSemaphores(ctx context.Context, deps Deps, k Kind, ops []SemaphoreOp) (*Node, error) {
	if g == nil {
		return nil, invalid("nil graph")
	}
	if err := checkSemaphores(g.dev, ops); err != nil {
		return nil, err
	}
	ops = append([]SemaphoreOp(nil), ops...)
	return g.add(ctx, deps, k, "", nil, func(rt backend.Device, hs []backend.GraphNode) (backend.GraphNode, error) {
		bops, err := semaphoreOps(g.dev, ops)
		if err != nil {
			return 0, err
		}
		var nh backend.GraphNode
		if k == SemaphoreSignalNode {
			nh, err = rt.GraphAddExternalSemaphoresSignalNode(g.h, hs, bops)
		} else {
			nh, err = rt.GraphAddExternalSemaphoresWaitNode(g.h, hs, bops)
		}
		if err == nil {
			g.res.holdSemaphores(g.dev, ops, k)
		}
		return nh, err
	})
}

// AddSemaphoreSignal adds a node signalling every semaphore of ops (external semaphores of
// g's device, see Semaphore) once the nodes of deps are done, and returns once it is added
// (cudaGraphAddExternalSemaphoresSignalNode). Once one of the semaphores is closed, launches
// of the graph's Execs are refused with device.ErrClosed. The simulator has no external
// semaphores, so there is nothing to give it.
func (g *Graph) AddSemaphoreSignal(ctx context.Context, deps Deps, ops ...SemaphoreOp) (*Node, error) {
	return g.addSemaphores(ctx, deps, SemaphoreSignalNode, ops)
}

// AddSemaphoreWait adds a node waiting for every semaphore of ops (external semaphores of g's
// device) after the nodes of deps: the nodes that depend on it run once all are signalled
// (cudaGraphAddExternalSemaphoresWaitNode); it returns once the node is added. Closing a
// semaphore refuses later launches as for AddSemaphoreSignal.
func (g *Graph) AddSemaphoreWait(ctx context.Context, deps Deps, ops ...SemaphoreOp) (*Node, error) {
	return g.addSemaphores(ctx, deps, SemaphoreWaitNode, ops)
}

// SemaphoreOps is what semaphore signal or wait node n signals or waits for, as the runtime
// reports it (cudaGraphExternalSemaphores*NodeGetParams). A semaphore that is no longer open
// (closed, or a captured node's semaphore imported elsewhere) is an ErrClosed error.
func (n *Node) SemaphoreOps(ctx context.Context) ([]SemaphoreOp, error) {
	return onNode(ctx, n, "reading the semaphores of", semaphoreKinds, func(rt backend.Device) ([]SemaphoreOp, error) {
		var bops []backend.SemaphoreOp
		var err error
		if n.kind == SemaphoreSignalNode {
			bops, err = rt.GraphExternalSemaphoresSignalNodeGetParams(n.h)
		} else {
			bops, err = rt.GraphExternalSemaphoresWaitNodeGetParams(n.h)
		}
		if err != nil {
			return nil, err
		}
		reg := coreDev(n.g.dev).Semaphores()
		out := make([]SemaphoreOp, len(bops))
		for i, op := range bops {
			sem, ok := reg.Of(op.Sem)
			if !ok {
				return nil, core.Closed("semaphore %d is no longer open", i)
			}
			out[i] = SemaphoreOp{Semaphore: sem.(Semaphore), Value: op.Value}
		}
		return out, nil
	})
}

// SetSemaphoreOps makes semaphore signal or wait node n signal or wait for ops instead
// (cudaGraphExternalSemaphores*NodeSetParams); it returns once set. Executable graphs made
// before keep their semaphores.
func (n *Node) SetSemaphoreOps(ctx context.Context, ops ...SemaphoreOp) error {
	if err := n.of(semaphoreKinds...); err != nil {
		return err
	}
	if err := checkSemaphores(n.g.dev, ops); err != nil {
		return err
	}
	ops = append([]SemaphoreOp(nil), ops...)
	_, err := onNode(ctx, n, "setting the semaphores of", semaphoreKinds, func(rt backend.Device) (struct{}, error) {
		bops, err := semaphoreOps(n.g.dev, ops)
		if err != nil {
			return struct{}{}, err
		}
		if n.kind == SemaphoreSignalNode {
			err = rt.GraphExternalSemaphoresSignalNodeSetParams(n.h, bops)
		} else {
			err = rt.GraphExternalSemaphoresWaitNodeSetParams(n.h, bops)
		}
		if err == nil {
			n.g.res.holdSemaphores(n.g.dev, ops, n.kind)
		}
		return struct{}{}, err
	})
	return err
}

// SetSemaphoreOps makes semaphore signal or wait node n signal or wait for ops (external
// semaphores of the Exec's device) in launches queued after it returns
// (cudaGraphExecExternalSemaphores*NodeSetParams).
func (x *Exec) SetSemaphoreOps(ctx context.Context, n *Node, ops ...SemaphoreOp) error {
	if x == nil {
		return invalid("nil executable graph")
	}
	if err := checkSemaphores(x.dev, ops); err != nil {
		return err
	}
	ops = append([]SemaphoreOp(nil), ops...)
	return x.setNode(ctx, n, semaphoreKinds, func(rt backend.Device) error {
		bops, err := semaphoreOps(x.dev, ops)
		if err != nil {
			return err
		}
		if n.kind == SemaphoreSignalNode {
			err = rt.GraphExecExternalSemaphoresSignalNodeSetParams(x.h, n.h, bops)
		} else {
			err = rt.GraphExecExternalSemaphoresWaitNodeSetParams(x.h, n.h, bops)
		}
		if err == nil {
			x.res.holdSemaphores(x.dev, ops, n.kind)
		}
		return err
	})
}
