package graphs

import (
	"fmt"
	"slices"

	"github.com/gpuactor/gpuactor/internal/core"
	"github.com/gpuactor/gpuactor/streams"
)

// held is an object a node of a graph uses whose handle the runtime keeps without keeping the
// object: an event of an event node, an array or pitched memory of a 3D copy node. Closing it
// leaves the node pointing at nothing, so a launch after that is refused rather than passed
// to the runtime.
type held struct {
	key   any    // the object, so that one used twice is checked once
	what  string // what it is to the node, for the error: "the event of an event-record node"
	alive func() error
}

// keep makes r's launches check h; on the actor thread. An object stays checked for r's life
// even when a node is later given another: an Exec made before the change still uses the old
// one.
func (r *resources) keep(h held) {
	if !slices.ContainsFunc(r.held, func(o held) bool { return o.key == h.key && o.what == h.what }) {
		r.held = append(r.held, h)
	}
}

// holdEvent makes r's launches check e, given to a node of kind k.
func (r *resources) holdEvent(e *streams.Event, k Kind) {
	r.keep(held{key: e, what: "the event of an " + k.String() + " node", alive: (*core.Event)(e).Alive})
}

// holdAll makes r check what c checks now (a child graph's, or an update's); on the actor
// thread.
func (r *resources) holdAll(c *resources) {
	for _, h := range c.held {
		r.keep(h)
	}
}

// heldAlive is nil while every object r's nodes use is open, else an error saying which was
// closed and wrapping its ErrClosed error; on the actor thread, before each launch.
func (r *resources) heldAlive() error {
	for _, h := range r.held {
		if err := h.alive(); err != nil {
			return fmt.Errorf("gpuactor/graphs: %s was closed, the graph cannot run: %w", h.what, err)
		}
	}
	return nil
}

// readable is nil when the runtime may read g's nodes (to instantiate, update from, clone or
// embed g): g is open and so is every object its nodes name. The runtime dereferences a
// node's event or array there, so one closed since would be freed memory (on a GPU, a crash
// inside cudaGraphInstantiate). On the actor thread.
func (g *Graph) readable(what string) error {
	if g.closed.Load() {
		return closed(what)
	}
	return g.res.heldAlive()
}

// launchable is nil when x may be launched: x is open and so is every object its nodes use.
func (x *Exec) launchable() error {
	if err := x.alive(); err != nil {
		return err
	}
	return x.res.heldAlive()
}
