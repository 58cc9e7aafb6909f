// Package cuda holds the CUDA vocabulary every gpuactor package shares: device addresses,
// launch shapes, kernel parameter kinds, and the view a simulated kernel has of its launch.
// It has no behaviour of its own and imports nothing of gpuactor's, so that the packages
// that drive devices (device, streams, alloc, graphs) and the backends beneath them all speak
// the same types.
//
// A launch names its shape with a LaunchConfig built from Dim:
//
//	cfg := cuda.LaunchConfig{Grid: cuda.Dim(n/256 + 1), Block: cuda.Dim(256)}
//
// On the simulator a kernel runs as a SimKernel, a Go function that reads its arguments by
// index and loops over the launch's threads itself:
//
//	scale := func(c *cuda.KernelCall) error {
//		n := int(c.Int32(2))
//		x := cuda.SimSlice[float32](c, 0, n)
//		for i := range x {
//			x[i] *= c.Float32(1)
//		}
//		return nil
//	}
package cuda
