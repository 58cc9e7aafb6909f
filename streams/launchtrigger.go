package streams

import (
	"context"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/core"
)

// LaunchTriggering queues a launch of k as Launch does, with e as its programmatic event
// (cudaLaunchAttributeProgrammaticEvent, programmatic dependent launch): it records e, and
// the record completes once every block of the kernel has called
// cudaTriggerProgrammaticLaunchCompletion or finished, which may be before the kernel ends.
// Work on another stream that waits on e (Stream.Wait) may then start early; it must not read
// what the kernel writes after its trigger. e must belong to the stream's device and be made
// with DisableTiming. The future completes when the GPU has run the kernel.
func (s *Stream) LaunchTriggering(ctx context.Context, k *device.Kernel, cfg cuda.LaunchConfig, e *Event, args ...any) *Future {
	return core.LaunchTriggering(ctx, s.core(), (*core.Kernel)(k), cfg, (*core.Event)(e), args)
}
