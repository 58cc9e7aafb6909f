package sim

import "github.com/gpuactor/gpuactor/internal/backend"

// EventQueryAnyThread is EventQuery from any goroutine (backend.AnyThreadEventQuerier): the
// simulator's events, streams and fault state are locked or atomic, as the runtime's are
// thread-safe.
func (d *device) EventQueryAnyThread(h backend.Event) error { return d.EventQuery(h) }

var _ backend.AnyThreadEventQuerier = (*device)(nil)
