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
// A Module belongs to the one device it was loaded on. Code that runs on several devices, or
// on a device opened again after a failure, uses a Program: compiled once per architecture,
// loaded on each device the first time a kernel is asked for there.
//
//	prog := device.NewProgram(device.Source{Name: "k.cu", Code: src, Sim: simKernels})
//	defer prog.Close(ctx)
//	k, err := prog.Kernel(ctx, dev, "scale") // on whichever device the work runs
//
// Backends: "cuda" drives the real runtime through purego (no cgo); "sim" is a CPU simulator
// with the runtime's ordering semantics, where kernels run as Go functions registered next to
// their CUDA source; "auto" picks cuda when libcudart loads and a device exists, else sim.
// Package sim makes a simulated machine to share between devices (WithSimulator), with
// speeds and faults to order; package isolate configures devices that run in a worker
// process of their own (Isolated).
//
// Every method that waits takes a context. A cancelled caller stops waiting at once; the
// operation it sent still completes on the device and releases what it holds, so nothing
// leaks. Mistakes (nil or oversized copies, use after Close, wrong kernel arguments, launch
// shapes beyond the device's limits, out of memory) return errors naming what was wrong, and
// leave the device usable. Every resource is released with Close, and a resource used after
// its Close — or a closed device — returns an error wrapping ErrClosed. Errors from the
// runtime wrap cudaerr codes: match them with errors.Is(err, cudaerr.MemoryAllocation).
//
// # In a service
//
// Device.Stats is a snapshot that never waits: mailbox depth, operations in flight, their
// latency, the actor's time, the completion tracking's work, memory against WithMemoryLimit,
// the staging pool against WithStagingLimit, and whether the device failed. expvar publishes it in one line (see
// Device.Stats's example); the module github.com/gpuactor/gpuactor/contrib/prometheus
// exports it to Prometheus. Device.Shutdown stops a device within a deadline. The library logs
// to a log/slog logger (WithLogger).
//
// In a CPU profile each device's actor goroutine carries the pprof labels gpuactor.device
// (its ordinal) and gpuactor.backend; in an execution trace (runtime/trace) a goroutine
// waiting on a future is in a region named actor.AwaitRegion, one waiting for a staging slot
// in gpuactor.staging.wait, and one waiting for room in a full mailbox in
// gpuactor.mailbox.full.
//
// # What the actor costs in CPU
//
// The actor spins rather than parks where parking would cost more than the wait: waking a
// parked, thread-locked goroutine takes longer than a GPU round trip. An idle actor polls its
// mailbox for actor.DefaultSpin (50 µs) before it parks; while the GPU has work in flight it
// keeps polling for completions for up to actor.DefaultBusySpin (20 ms), so one CPU core per
// device is busy while work is outstanding, as CUDA's own default spin-wait does; and a
// caller's Await spins for actor.DefaultAwaitSpin (100 µs) before parking. Stats.Actor.Spin
// says how much of the actor's time went to spinning. WithActorTuning trades it away:
// BusySpin: NoSpin parks between polls of the GPU (a completion is then seen when the
// IdlePoll timer fires, and timers under a millisecond oversleep to about one), Spin: NoSpin
// parks as soon as the mailbox is empty (each message then pays a wake of tens of
// microseconds), and AwaitSpin: NoSpin parks waiters at once. A service whose requests are
// much longer than those costs, or that shares its cores with heavier work, loses little with
// all three off. WaiterQuery: WaiterQueryOn lets a caller spinning in Await on a stream
// operation's future ask the GPU itself whether the operation has completed, from its own
// thread, instead of waiting for the actor to notice and hand the result over
// (docs/design/waiter-completion.md). Whatever the tuning, the process's spinners (actors, waiters, group workers)
// share one budget that always leaves a P to spare, so that however many devices spin, the
// goroutines that send them work and take their results still run.
//
// A nil *Buffer, *HostBuffer, *Module or *Kernel is refused by what can fail with an
// ErrInvalidArgument error naming it; its accessors return zero values (Closed reports true),
// and nothing panics.
package device
