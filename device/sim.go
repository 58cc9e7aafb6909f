package device

import "github.com/gpuactor/gpuactor/internal/backend"

// SimKernel is the Go implementation of a kernel for the simulator. It runs once per launch
// (not once per thread) when the stream reaches the launch, and loops over the work itself.
// Returning an error or panicking (e.g. SimSlice past an allocation's end) is a device fault:
// the simulated device fails with a sticky error, as a real one would.
type SimKernel = backend.SimKernel

// KernelCall is a launch as a SimKernel sees it: shape, arguments (read them with Int32,
// Float32, Ptr… by index) and the device's memory.
type KernelCall = backend.KernelCall

// SimSlice views n elements of T at the device pointer in argument i of a simulated launch.
func SimSlice[T any](c *KernelCall, i, n int) []T { return backend.Slice[T](c, i, n) }
