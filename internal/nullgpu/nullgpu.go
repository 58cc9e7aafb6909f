// Package nullgpu wraps a backend so that the calls a stream of work makes for each operation
// (kernel and graph launches, event records and queries, stream-ordered allocation) cost
// nothing and finish at once. Benchmarks run gpuactor on it to measure gpuactor's own cost per
// operation (messages, futures, completion tracking), apart from both the GPU and the
// simulator's work: on a GPU that cost hides behind the launch rate, which is why it is easy
// to let grow and hard to see.
package nullgpu

import (
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/sim"
)

// New is the null GPU over a fresh simulator of its default size: timing a round trip on it
// times the message hop, the tracker and the waiter's wake-up, and none of the simulator's
// stream goroutines.
func New() backend.Backend { return Backend{Backend: sim.New()} }

// Backend is b with the per-operation calls of its devices made free.
type Backend struct{ backend.Backend }

// Open opens b's device and wraps it.
func (b Backend) Open(ordinal int) (backend.Device, error) {
	d, err := b.Backend.Open(ordinal)
	if err != nil {
		return nil, err
	}
	return &device{Device: d}, nil
}

// device answers the per-operation calls itself; everything else goes to the wrapped device.
type device struct {
	backend.Device
	next uint64 // the last made-up address MallocAsync handed out
}

func (*device) Launch(backend.Kernel, backend.Dim3, backend.Dim3, uint32, backend.Stream, []backend.Arg) error {
	return nil
}

func (*device) GraphLaunch(backend.GraphExec, backend.Stream) error { return nil }

func (*device) GraphLaunchN(_ backend.GraphExec, _ backend.Stream, n int) (int, error) {
	return max(n, 0), nil
}

func (*device) EventRecord(backend.Event, backend.Stream) error { return nil }

// EventQuery reports every record complete: nothing was queued.
func (*device) EventQuery(backend.Event) error { return nil }

// MallocAsync hands out made-up, never-overlapping addresses 1 MiB apart.
func (d *device) MallocAsync(uint64, backend.Stream) (backend.DevicePtr, error) {
	d.next += 1 << 20
	return backend.DevicePtr(d.next), nil
}

func (*device) FreeAsync(backend.DevicePtr, backend.Stream) error { return nil }

// StreamQuery reports every stream idle: nothing was queued.
func (*device) StreamQuery(backend.Stream) error { return nil }

// EventQueryAnyThread is EventQuery from any goroutine: every record has passed.
func (*device) EventQueryAnyThread(backend.Event) error { return nil }
