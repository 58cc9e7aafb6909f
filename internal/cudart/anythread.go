package cudart

import "github.com/gpuactor/gpuactor/internal/backend"

// EventQueryAnyThread is cudaEventQuery from any goroutine (backend.AnyThreadEventQuerier):
// the runtime's event query is thread-safe and needs no current device, and this form takes
// a call frame of the pool, not the device's own, which only its actor's thread uses.
func (d *device) EventQueryAnyThread(e Event) error { return d.rt.EventQuery(e) }

var _ backend.AnyThreadEventQuerier = (*device)(nil)
