// Package device is gpuactor's entry point: a Device is one GPU driven by an actor — one
// goroutine locked to one OS thread for its whole life, owning the device's primary context.
// Any number of goroutines may call a Device at once; every call is a message to that actor.
//
// Open a device, compile a kernel, and run it on a stream (package streams) with typed memory
// (package alloc):
//
//	dev, err := device.Open(ctx, 0)                // backend from GPUACTOR_BACKEND, else auto
//	defer dev.Close()
//	mod, err := dev.Compile(ctx, device.Source{Name: "k.cu", Code: src, Sim: simKernels})
//	k, err := mod.Kernel(ctx, "scale")
//	s := streams.Default(dev)                      // the device's own stream, or streams.New
//	buf, _, err := alloc.MallocAsync[float32](ctx, s, n)
//	err = actor.WaitAll(ctx,
//		streams.CopyToDevice(ctx, s, buf, xs),
//		s.Launch(ctx, k, cuda.LaunchConfig{Grid: cuda.Dim(n/256 + 1), Block: cuda.Dim(256)}, buf, int32(n)),
//		streams.CopyFromDevice(ctx, s, xs, buf))
//
// Backends: "cuda" drives the real runtime through purego (no cgo); "sim" is a CPU simulator
// with the runtime's ordering semantics, where kernels run as Go functions registered next to
// their CUDA source; "auto" picks cuda when libcudart loads and a device exists, else sim.
//
// Every method that waits takes a context. A cancelled caller stops waiting at once; the
// operation it sent still completes on the device and releases what it holds, so nothing
// leaks. Mistakes (nil or oversized copies, use after Close, wrong kernel arguments, launch
// shapes beyond the device's limits, out of memory) return errors naming what was wrong, and
// leave the device usable. Every resource is released with Close, and a resource used after
// its Close — or a closed device — returns an error wrapping ErrClosed. Errors from the
// runtime wrap cudaerr codes: match them with errors.Is(err, cudaerr.MemoryAllocation).
package device
