// Package device is gpuactor's entry point: a Device is one GPU driven by an actor — one
// goroutine locked to one OS thread for its whole life, owning the device's primary context.
// Any number of goroutines may call a Device at once; every call is a message to that actor.
//
// Open a device, move data, compile and launch a kernel:
//
//	dev, err := device.Open(ctx, 0)                // backend from GPUACTOR_BACKEND, else auto
//	defer dev.Close()
//	buf, err := dev.Malloc(ctx, 4*n)
//	err = device.CopyToDevice(ctx, buf, xs)        // xs []float32
//	mod, err := dev.Compile(ctx, device.Source{Name: "k.cu", Code: src, Sim: simKernels})
//	k, err := mod.Kernel("scale")
//	err = dev.LaunchSync(ctx, k, device.Config{Grid: device.Dim(n/256), Block: device.Dim(256)}, buf, int32(n))
//	err = device.CopyFromDevice(ctx, xs, buf)
//
// Backends: "cuda" drives the real runtime through purego (no cgo); "sim" is a CPU simulator
// with the runtime's ordering semantics, where kernels run as Go functions registered next to
// their CUDA source; "auto" picks cuda when libcudart loads and a device exists, else sim.
//
// Every method that waits takes a context. A cancelled caller stops waiting at once; the
// operation it sent still completes on the device and releases what it holds, so nothing
// leaks. Mistakes (nil or oversized copies, use after free, wrong kernel arguments, launch
// shapes beyond the device's limits, out of memory) return errors naming what was wrong, and
// leave the device usable. Errors from the runtime wrap cudaerr codes: match them with
// errors.Is(err, cudaerr.MemoryAllocation).
package device
