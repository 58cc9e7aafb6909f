// Package nullgpu is a backend for benchmarks of gpuactor's own CPU work: the simulator, with
// a GPU that has always finished. Kernel launches are accepted and do nothing, event records
// and queries report success at once, and streams are always idle; everything else (memory,
// modules, streams, events) is the simulator's. Timing a round trip on it times the message
// hop, the tracker and the waiter's wake-up, and none of the simulator's stream goroutines.
package nullgpu

import (
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/sim"
)

// New returns a null backend over a fresh simulator of its default size.
func New() backend.Backend { return nullBackend{sim.New()} }

type nullBackend struct{ backend.Backend }

// Open opens the simulator's device ordinal behind a null GPU.
func (b nullBackend) Open(ordinal int) (backend.Device, error) {
	d, err := b.Backend.Open(ordinal)
	if err != nil {
		return nil, err
	}
	return nullDevice{d}, nil
}

// nullDevice: launches are accepted and done, events recorded and passed, streams idle.
type nullDevice struct{ backend.Device }

func (nullDevice) Launch(backend.Kernel, backend.Dim3, backend.Dim3, uint32, backend.Stream, []backend.Arg) error {
	return nil
}
func (nullDevice) EventRecord(backend.Event, backend.Stream) error { return nil }
func (nullDevice) EventQuery(backend.Event) error                  { return nil }
func (nullDevice) StreamQuery(backend.Stream) error                { return nil }

// EventQueryAnyThread is EventQuery from any goroutine: every record has passed.
func (nullDevice) EventQueryAnyThread(backend.Event) error { return nil }
