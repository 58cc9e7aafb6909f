package graphs

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
	"github.com/gpuactor/gpuactor/streams"
)

// LaunchN sends its runs to the actor in messages, each queuing its runs from one crossing
// into C (backend GraphLaunchN), since a Go call into C per run costs a few percent of a
// one-node graph's launch. A message holds the actor for its runs' launches, during which
// other callers' messages wait and the tracker does not poll; so a message takes about
// launchBudget of the actor's time: as many runs as the Exec's last message launched in that
// time (runCost), launchFirst while it has not launched any. The budget is about what a
// drained batch of 64 kernel launches takes (actor.runList), and holds a 100-run replay of a
// one-node graph in one message, where more messages would each add the actor's per-message
// cost (docs/design/launchn.md).
const (
	launchBudget = 250 * time.Microsecond
	launchFirst  = 32
	launchMax    = 1024
)

// chunkSize is how many runs a LaunchN message of x queues.
func (x *Exec) chunkSize() int {
	if x.chunk > 0 {
		return x.chunk
	}
	cost := time.Duration(x.runCost.Load())
	if cost <= 0 {
		return launchFirst
	}
	return int(min(max(launchBudget/cost, 1), launchMax))
}

// replaySpin is how long Await on a LaunchN future spins before parking, on hosts with
// replaySpinCPUs or more. A caller awaiting a replay waits for the GPU, as a C++ program's
// cudaStreamSynchronize after its launch loop does, and that spins by default; a goroutine
// parked past Await's default window wakes tens of microseconds after the future completes, a
// large part of a short replay. So the future spins as long as the device actor does while GPU
// work is in flight (20 ms), past which a wake-up is noise.
//
// Where the caller and the actor spinning leave fewer than two CPUs (or Ps) for the rest, the
// spin starves the goroutines that complete the work (the simulator's streams, host nodes'
// functions), so that a simulated replay would take the whole spin. There, and for futures set
// not to spin (actor.WithAwaitSpin(0)), Await keeps its own window (replayAwaitSpin).
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
// The runs are queued in messages of about a quarter of a millisecond of the actor's time
// each, so other callers' operations may be queued on the device, and on s, between them. If
// ctx ends before every run is queued, the rest are not queued, and the future fails with
// ctx's error once the queued ones have run; the same holds after a launch is refused.
// LaunchN returns once its messages are sent: a replay of more messages than the actor's
// mailbox holds (1024 by default: some 100,000 runs of a one-node graph) waits for room in it,
// even if ctx ends (the messages left then queue nothing). On hosts with 4 CPUs or more, Await on the future spins for up to 20 ms before it
// parks, as cudaStreamSynchronize does (replaySpin says why).
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
	// The messages are sent whatever ctx does, so that the last one's future, the caller's,
	// completes only after the runs queued before it; each checks ctx on the actor. Only the
	// last is tracked: its future completes once the GPU has passed it, and so every run
	// before it; the others' complete once queued, and nobody waits on them.
	send := context.WithoutCancel(ctx)
	chunk := x.chunkSize()
	var f *streams.Future
	for first := 0; first < n; first += chunk {
		o := &launchChunkOp{b: b, first: first, count: min(chunk, n-first)}
		if first+chunk < n {
			core.Submit(send, coreStream(s), &o.Msg, o, core.Tracking{Queued: true})
			continue
		}
		f = core.Submit(send, coreStream(s), &o.Msg, o, core.Tracking{Then: o.result})
	}
	f.SetAwaitSpin(replayAwaitSpin(f.AwaitSpin(), min(runtime.GOMAXPROCS(0), runtime.NumCPU())))
	return f
}

// launchBatch is one LaunchN: its messages' shared state, touched only on the actor thread.
type launchBatch struct {
	x   *Exec
	ctx context.Context
	n   int
	err error // the first error of a message, queuing or run
}

// fail keeps err if it is the batch's first.
func (b *launchBatch) fail(err error) {
	if b.err == nil {
		b.err = err
	}
}

// launchChunkOp queues runs [first, first+count) of a launchBatch.
type launchChunkOp struct {
	core.Msg
	b            *launchBatch
	first, count int
}

// Enqueue queues the message's runs, unless the batch has already failed or its context
// ended, and keeps what a run cost for the Exec's later messages (chunkSize). A refused
// launch ends the batch but does not fail the message when runs were queued before it: the
// last message's future must still wait for those (result reports the error).
func (o *launchChunkOp) Enqueue(rt backend.Device, _ *core.Tracker, h backend.Stream) error {
	b := o.b
	if b.err != nil {
		return nil
	}
	if err := b.ctx.Err(); err != nil {
		b.fail(err)
		return nil
	}
	if err := b.x.launchable(); err != nil {
		b.fail(err)
		return nil
	}
	start := time.Now()
	done, err := rt.GraphLaunchN(b.x.h, h, o.count)
	if done > 0 {
		b.x.runCost.Store(int64(time.Since(start)) / int64(done))
	}
	if err != nil {
		b.fail(fmt.Errorf("gpuactor/graphs: LaunchN: run %d of %d: %w", o.first+done+1, b.n, err))
	}
	return nil
}

// result is the last message's future's result once the GPU has passed its runs, on the
// actor thread: the GPU has passed every earlier message's runs too (stream order), so it is
// the batch's first error.
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
