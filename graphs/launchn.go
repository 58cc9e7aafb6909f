package graphs

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/streams"
)

// launchChunk is how many runs one message of LaunchN queues. A message costs the actor about
// 0.5 µs on the H100 hosts, a quarter of an empty graph's launch, so a message per run makes a
// one-node graph's replay 20–30% slower than the runtime's own loop; 32 runs a message bring
// that cost under 1%, and keep any one message under ~0.1 ms of the actor's time for small
// graphs, so that other callers' messages are not held up behind a long replay. A chunk's
// runs are queued from one crossing into C (backend GraphLaunchN), not one a run: a Go call
// into C costs a few percent of a one-node graph's launch.
const launchChunk = 32

// replaySpin is how long Await on a LaunchN future spins before parking, on hosts with
// replaySpinCPUs or more. A caller awaiting a replay waits for the GPU, as a C++ program's
// cudaStreamSynchronize after its launch loop does, and that spins by default; a goroutine
// parked past Await's default window (100 µs) wakes 20–25 µs after the future completes on the
// GPU hosts: a tenth of a 100-run replay of a one-node graph, 2% of one of a ten-node graph.
// So the future spins as long as the device actor does while GPU work is in flight (20 ms),
// past which a wake-up is noise.
//
// Where the caller and the actor spinning leave fewer than two CPUs (or Ps) for the rest, the
// spin starves the goroutines that complete the work (the simulator's streams, host nodes'
// functions): on a 2-CPU host a simulated 100-run replay took the whole 20 ms. There, and for
// futures set not to spin (actor.WithAwaitSpin(0)), Await keeps its own window (replayAwaitSpin).
const (
	replaySpin     = 20 * time.Millisecond
	replaySpinCPUs = 4
)

// replayAwaitSpin is the Await spin of a LaunchN future made with spin, on a host with procs
// CPUs and Ps (the fewer of the two).
func replayAwaitSpin(spin time.Duration, procs int) time.Duration {
	if spin <= 0 || procs < replaySpinCPUs {
		return spin
	}
	return max(spin, replaySpin)
}

// LaunchN queues n runs of the graph on s, back to back, as a replay loop on the device's
// actor thread would: the way to replay a graph many times at the runtime's own launch rate,
// where n calls of Launch pay the actor's per-message cost n times. The future completes when
// the last run has completed, with the first error any run met (a host node's panic as
// Launch reports it, a launch the runtime refused, or the GPU's error). n must be at least 1.
//
// The runs are queued in messages of a few dozen, so other callers' operations may be queued
// on the device, and on s, between them. If ctx ends before every run is queued, the rest are
// not queued, and the future fails with ctx's error once the queued ones have run; the same
// holds after a launch is refused. LaunchN returns once its messages are sent: past about
// 30,000 runs that waits for room in the actor's mailbox, even if ctx ends (the messages left
// then queue nothing). On hosts with 4 CPUs or more, Await on the future spins for up to
// 20 ms before it parks, as cudaStreamSynchronize does (replaySpin says why).
func (x *Exec) LaunchN(ctx context.Context, s *streams.Stream, n int) *streams.Future {
	if err := x.usableOn(s); err != nil {
		return failed(err)
	}
	if err := x.alive(); err != nil {
		return failed(err)
	}
	if n < 1 {
		return failed(invalid("LaunchN of %d runs: n must be at least 1", n))
	}
	if err := ctx.Err(); err != nil {
		return failed(err)
	}
	b := &launchBatch{x: x, ctx: ctx, n: n}
	// The chunks are sent whatever ctx does, so that the last one's future, the caller's,
	// completes only after the runs queued before it; each chunk checks ctx on the actor.
	send := context.WithoutCancel(ctx)
	var f *streams.Future
	for first := 0; first < n; first += launchChunk {
		o := &launchChunkOp{b: b, first: first, count: min(launchChunk, n-first)}
		f = streams.SubmitThen(send, s, &o.Op, o, o.result)
	}
	f.SetAwaitSpin(replayAwaitSpin(f.AwaitSpin(), min(runtime.GOMAXPROCS(0), runtime.NumCPU())))
	return f
}

// launchBatch is one LaunchN: its chunks' shared state, touched only on the actor thread.
type launchBatch struct {
	x   *Exec
	ctx context.Context
	n   int
	err error // the first error of a chunk, queuing or run
}

// fail keeps err if it is the batch's first.
func (b *launchBatch) fail(err error) {
	if b.err == nil {
		b.err = err
	}
}

// launchChunkOp queues runs [first, first+count) of a launchBatch.
type launchChunkOp struct {
	streams.Op
	b            *launchBatch
	first, count int
}

// EnqueueOn queues the chunk's runs, unless the batch has already failed or its context ended.
// A refused launch ends the batch but does not fail the message when runs were queued before
// it: the chunk's future must still wait for those (result reports the error).
func (o *launchChunkOp) EnqueueOn(rt backend.Device, _ *device.Tracker, h backend.Stream) error {
	b := o.b
	if b.err != nil {
		return nil
	}
	if err := b.ctx.Err(); err != nil {
		b.fail(err)
		return nil
	}
	if err := b.x.alive(); err != nil {
		b.fail(err)
		return nil
	}
	if done, err := rt.GraphLaunchN(b.x.h, h, o.count); err != nil {
		b.fail(fmt.Errorf("gpuactor/graphs: LaunchN: run %d of %d: %w", o.first+done+1, b.n, err))
	}
	return nil
}

// result is the chunk's future's result once the GPU has passed its runs, on the actor thread:
// chunks complete in stream order, so the last chunk's result is the batch's first error.
func (o *launchChunkOp) result(err error) error {
	b := o.b
	if b.x.res.anyHosts() {
		err = b.x.reportPanic(err)
	}
	if err != nil {
		b.fail(err)
	}
	return b.err
}
