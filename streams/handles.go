package streams

import "github.com/gpuactor/gpuactor/internal/backend"

// EventHandle is e's handle, for packages that build on streams (graphs' event nodes); call it
// on the actor thread of e's device. A nil or destroyed event is refused. Its result type is
// internal to the module, so code outside it cannot use it.
func EventHandle(e *Event) (backend.Event, error) {
	if e == nil {
		return 0, invalid("nil event")
	}
	if err := e.alive(); err != nil {
		return 0, err
	}
	return e.h, nil
}
