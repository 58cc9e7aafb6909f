package graphs

import (
	"fmt"
	"slices"

	"github.com/gpuactor/gpuactor/internal/core"
	"github.com/gpuactor/gpuactor/streams"
)

// heldEvent is an event a node of a graph records or waits for, and the kind of that node.
// The runtime keeps only the event's handle: destroying the event leaves the node pointing at
// nothing, so a launch after the event's Close is refused rather than passed to the runtime.
type heldEvent struct {
	e    *streams.Event
	kind Kind
}

// holdEvent makes r's launches check e, given to a node of kind k; on the actor thread. An
// event stays checked for r's life even when a node is later given another: an Exec made
// before the change still uses the old one.
func (r *resources) holdEvent(e *streams.Event, k Kind) {
	h := heldEvent{e: e, kind: k}
	if !slices.Contains(r.events, h) {
		r.events = append(r.events, h)
	}
}

// holdEvents makes r check the events c checks now (a child graph's, or an update's); on the
// actor thread.
func (r *resources) holdEvents(c *resources) {
	for _, h := range c.events {
		r.holdEvent(h.e, h.kind)
	}
}

// eventsAlive is nil while every event r's nodes use is open, else an error naming the kind of
// node and wrapping the event's ErrClosed error; on the actor thread, before each launch.
func (r *resources) eventsAlive() error {
	for _, h := range r.events {
		if err := (*core.Event)(h.e).Alive(); err != nil {
			return fmt.Errorf("gpuactor/graphs: the event of an %s node was closed, the graph cannot run: %w", h.kind, err)
		}
	}
	return nil
}

// launchable is nil when x may be launched: x is open and so is every event its nodes use.
func (x *Exec) launchable() error {
	if err := x.alive(); err != nil {
		return err
	}
	return x.res.eventsAlive()
}
