package group

import (
	"fmt"
	"log/slog"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/spin"
	"github.com/gpuactor/gpuactor/streams"
)

// work is one of m's workers, as many as it has streams: it runs the jobs queued on m, and
// while m's device is healthy those of the shared queue, each on a free stream of m, until the
// group closes.
func (m *member) work() {
	defer m.g.workers.Done()
	for {
		gn := m.cur.Load()
		shared, wake := m.g.shared, (chan struct{})(nil)
		if !gn.healthy() {
			// A failed device takes no more work; its own queue moves elsewhere. A restart
			// (replaced) brings the worker back to the shared queue. Once no device is left
			// (every one failed together, as a sticky fault fails every GPU of a process),
			// the worker fails what waits in the shared queue, and what comes to it later,
			// which would otherwise wait for good.
			if m.g.anyLive() {
				shared, wake = nil, gn.replaced
			} else {
				m.g.noneLeft()
			}
		}
		j, quit := m.next(shared, wake)
		if quit {
			m.refuseQueued()
			return
		}
		if j != nil {
			m.take(j)
		}
	}
}

// workerSpin is how long an idle worker polls for its next job before it parks: a job sent
// meanwhile starts without the wake of a parked goroutine.
const workerSpin = 20 * time.Microsecond

// next takes the next job for m from its own queue or shared, polling for workerSpin, with a
// token of the process's spin budget, before it parks. quit is true once the group closes;
// j is nil, and quit false, once wake is closed.
func (m *member) next(shared chan *job, wake chan struct{}) (j *job, quit bool) {
	if spin.Acquire() {
		j, quit, got := m.poll(shared, wake)
		spin.Release()
		if got {
			return j, quit
		}
	}
	select {
	case j := <-m.queue:
		return j, false
	case j := <-shared:
		return j, false
	case <-m.g.quit:
		return nil, true
	case <-wake:
		return nil, false
	}
}

// poll polls the queues for workerSpin; got is false when nothing came.
func (m *member) poll(shared chan *job, wake chan struct{}) (j *job, quit, got bool) {
	for deadline := time.Now().Add(workerSpin); ; {
		select {
		case j := <-m.queue:
			return j, false, true
		case j := <-shared:
			return j, false, true
		case <-m.g.quit:
			return nil, true, true
		case <-wake:
			return nil, false, true
		default:
		}
		if !time.Now().Before(deadline) {
			return nil, false, false
		}
		runtime.Gosched()
	}
}

// refuseQueued fails every job queued on m: the group is closing.
func (m *member) refuseQueued() { refuseAll(m.queue) }

// take runs j, just dequeued, on a free stream of m, unless it ended (cancelled while queued)
// or m's device failed, which moves it to another device.
func (m *member) take(j *job) {
	if j.state.Load() == jobEnded {
		return // cancelled in the queue: its room and counts went back then
	}
	gn := m.cur.Load()
	var s *streams.Stream
	select {
	case s = <-gn.free:
	default:
		select { // a Do call holds the stream: wait for it, as the job would have in the queue
		case s = <-gn.free:
		case <-j.ctx.Done():
			j.cancelQueued()
			return
		case <-m.g.quit:
			j.refuse(fmt.Errorf("group closed: %w", device.ErrClosed))
			return
		}
	}
	s = gn.lend(s)
	defer func() { gn.giveBack(s) }()
	if j.ctx.Err() != nil {
		j.cancelQueued() // its context ended in the queue: it leaves as cancelled, not run
		return
	}
	if !gn.healthy() {
		j.move(m)
		return
	}
	if !j.state.CompareAndSwap(jobQueued, jobRunning) {
		return
	}
	j.stop()
	j.dequeued()
	j.releaseToken() // out of the queue: room for another
	again, err := m.runOn(j, gn, s)
	if tries := j.tries; again && m.g.again(j) { // j is another worker's once again queued it
		m.retried.Add(1)
		m.g.cfg.log.Info("group: job runs again on another device", slog.Int("device", gn.dev.Ordinal()),
			slog.Int("tries", tries), slog.Any("error", err))
		return
	}
	if again {
		m.failedJobs.Add(1) // no device could take it again: it ends here
	}
	j.state.Store(jobEnded)
	j.p.Complete(struct{}{}, err)
}

// runOn runs j on s, of m's generation gn, with the group's accounting, and returns its
// error; again is true when gn's device failed under j and j may run elsewhere: it is
// Idempotent, has not yet run as many times as the group has devices, and its context goes
// on; the caller then places it again and counts a retry (m.retried), or fails it with err
// and counts it failed. A job is counted done or failed once, where it ended.
func (m *member) runOn(j *job, gn *generation, s *streams.Stream) (again bool, err error) {
	j.on.Store(m)
	m.running.Add(1)
	m.reserved.Add(j.cfg.bytes)
	start := time.Now()
	err = gn.run(j, s)
	m.busy.Add(int64(time.Since(start)))
	m.running.Add(-1)
	m.reserved.Add(-j.cfg.bytes)
	if err != nil && gn.down() { // the device failed under the job
		gn.leave(err)
		again = j.cfg.idempotent && j.tries < len(m.g.members) && j.ctx.Err() == nil
		if !again {
			m.failedJobs.Add(1)
		}
		return again, m.deviceError(gn, err)
	}
	if err != nil {
		m.failedJobs.Add(1)
	} else {
		m.done.Add(1)
	}
	return false, err
}

// run runs the job's function on gn's device, its declared memory held, and turns a panic
// into an error.
func (gn *generation) run(j *job, s *streams.Stream) (err error) {
	j.tries++
	if j.cfg.bytes > 0 {
		if err := gn.mem.Acquire(j.ctx, j.cfg.bytes); err != nil {
			return err
		}
		defer gn.mem.Release(j.cfg.bytes)
	}
	defer func() {
		if r := recover(); r != nil {
			err = &actor.PanicError{Value: r, Stack: debug.Stack()}
		}
	}()
	return j.fn(j.ctx, gn.dev, s)
}

// move takes queued job j, dequeued by a worker of failed member from, to where it can run,
// or fails it when no device is left (ErrNoDevice) or the group is closing.
func (j *job) move(from *member) {
	if !j.state.CompareAndSwap(jobQueued, jobMoving) {
		return
	}
	g := j.g
	g.mu.RLock()
	var to *member
	shared := false
	if !g.closing {
		to, shared = g.place(j)
	}
	if to == nil && !shared {
		g.mu.RUnlock()
		j.state.Store(jobQueued)
		err := fmt.Errorf("group closed: %w", device.ErrClosed)
		if !g.closing {
			err = fmt.Errorf("%w: device %d failed and no other can take the job", ErrNoDevice, from.cur.Load().dev.Ordinal())
		}
		j.refuse(err)
		return
	}
	j.dequeued()
	g.enqueue(j, to, false) // its context's watch goes on
	j.state.Store(jobQueued)
	g.mu.RUnlock()
	g.cfg.log.Debug("group: queued job moved off a failed device", slog.Int("device", from.cur.Load().dev.Ordinal()))
	if j.ctx.Err() != nil {
		j.cancelQueued() // cancelled while it moved
	}
}

// again queues idempotent job j, whose device failed under it, where another device takes
// it; false when none can (the group closed, no healthy device is left). A rerun takes no room
// in the queue: it was let in once, and waiting for room could wait on itself.
func (g *Group) again(j *job) bool {
	g.mu.RLock()
	defer g.mu.RUnlock()
	if g.closing {
		return false
	}
	to, shared := g.place(j)
	if to == nil && !shared {
		return false
	}
	j.state.Store(jobQueued)
	g.enqueue(j, to, true)
	return true
}
