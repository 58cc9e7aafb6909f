// Package streams gives gpuactor CUDA streams and events. Every stream-ordered operation —
// kernel launch, copy, memset, host function, event record, wait on an event — returns a
// future that completes when the GPU reaches that point in the stream, carrying the error
// that stopped it, if any.
//
//	s, err := streams.New(ctx, dev)                // or streams.Default(dev), the device's own
//	defer s.Close(ctx)
//	up := streams.CopyToDevice(ctx, s, buf, xs)    // a Go slice, staged through pinned memory
//	run := s.Launch(ctx, k, cfg, buf, int32(n))
//	down := streams.CopyFromDevice(ctx, s, ys, buf)
//	err = actor.WaitAll(ctx, up, run, down)         // ys holds the result
//
// # Completion without a callback per operation
//
// Futures are completed by the device's actor, not by CUDA host callbacks: between messages it
// records events (watermarks) on the streams that got new work and asks the oldest ones,
// completing every future a finished one covers. An idle stream gets its watermark at once, so
// a lone operation completes as soon as the GPU reaches it; a busy stream's operations share
// one watermark per 16 operations or per 200 µs for each stream with work tracked (at most
// 1.6 ms), so a stream of futures costs little more than the same operations without them
// (docs/design/tracker.md; device.Stats.Tracker counts the work).
//
// # Go slices at pinned speed
//
// CopyToDevice and CopyFromDevice copy a plain Go slice through a ring of pinned staging
// buffers of the stream's own (4 MiB each, pinned on the first such copy and freed with the
// stream), in chunks several of which are in flight at once, the host side of each copied by
// goroutines of the ring's own while earlier chunks cross the link. Uploads use as many
// copying goroutines as it takes to fill staging faster than the link drains it (the ring
// measures the host's memmove rate when it is made); more would slow the link's reads of host
// memory. Downloads use GOMAXPROCS−2 (at most 16). StagingWorkers sets both. A large copy
// comes near 0.8× of pinned bandwidth where the host's memory allows it; small copies cannot
// overlap enough to come close (docs/design/staging.md). For a buffer copied often, pinned
// memory (alloc.MallocPinned, alloc.Register) is the fast path.
//
// # Default streams
//
// gpuactor never queues work on the legacy default stream (stream 0) nor on the per-thread
// default stream: goroutines move between threads, so "this thread's stream" means nothing to
// a Go caller. Streams made here are non-blocking by default: they do not wait for, nor hold
// up, work another library in the process queues on the legacy default stream. Blocking()
// makes one that does synchronize with the legacy default stream, as cudaStreamDefault does.
// Every device also has a stream of its own, Default(dev), for callers that need no stream of
// their own; it is an ordinary non-blocking stream that the device destroys when it closes.
//
// # Lifetimes
//
// A HostBuffer or device buffer handed to an operation must stay allocated until its future
// completes; a device.Buffer's Close waits for the work queued on the device's own stream
// only, so free a buffer used on other streams after their futures complete (a typed
// alloc.Buffer is freed in its stream's order instead). A Go
// slice handed to CopyToDevice or CopyFromDevice is owned by the operation until its future
// completes: the caller may reuse or read it then, not before. Close waits for the work in
// flight on the stream to finish, completes its futures, then destroys it; later operations
// on the stream fail with device.ErrClosed. A cancelled context stops the caller's wait, never the
// operation: its future still completes and whatever it holds is released then. Closing the
// device destroys the streams and events it still has.
//
// A nil *Stream or *Event is a caller's mistake like any other bad argument: what can fail
// returns an error wrapping device.ErrInvalidArgument that names the nil handle (a future
// completes with it at once), accessors return zero values, and nothing panics.
package streams
