package group

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/semaphore"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/logging"
	"github.com/gpuactor/gpuactor/streams"
	"github.com/gpuactor/gpuactor/supervise"
)

// Job is a unit of work the group runs on device d, on stream s of d lent to it for the
// job's duration. ctx is the job's: Submit's context, ended when the job's caller gives up.
// The job's future completes when Job returns; work it queued and did not wait for may still
// run on the GPU after that.
type Job func(ctx context.Context, d *device.Device, s *streams.Stream) error

// Group places jobs on a set of devices and runs them. Safe for concurrent use.
type Group struct {
	cfg     config
	members []*member
	tokens  chan struct{} // one per job queued by Submit: the queue's bound
	shared  chan *job     // jobs any healthy device may take (LeastOutstanding)
	room    int           // every queue's capacity
	waiting atomic.Int64  // jobs in shared
	rr      atomic.Uint64 // RoundRobin's turn, and where LeastOutstanding's ties start

	mu      sync.RWMutex // Close (write) against Submit's enqueue (read)
	closing bool
	quit    chan struct{} // closed by Close: workers fail what is queued and stop
	workers sync.WaitGroup
	inline  sync.WaitGroup // Do calls running jobs on their callers' goroutines

	batch batch // Go and Wait

	peers sync.Map // [2]*device.Device{from, to} → whether MapTo copies from→to over a link (mapto.go)

	shut     atomic.Bool   // Close began: a generation closed now is not being replaced
	finished chan struct{} // closed once the first Close or Shutdown has closed the group (finish)
	closeErr error         // what finish found, set before finished closes
	// Shutdown's context, once it was called: the devices the group closes then shut down
	// within it (Device.Shutdown) instead of closing without a bound.
	downCtx  atomic.Pointer[context.Context]
	life     context.Context // the supervisors': Close ends it, cancelling a restart under way
	endLife  context.CancelFunc
	watchers sync.WaitGroup // one per supervisor: notes when it gives up (restart.go)
}

// member is one device of the group. Its device, streams and memory are a generation, which
// a restart (WithRestart) swaps for a new one; the member's queue and counts go on.
type member struct {
	g     *Group
	cur   atomic.Pointer[generation] // the device now: read without a lock on every job
	queue chan *job

	sup      *supervise.Supervisor[*generation] // restarts the device; nil without WithRestart
	gaveUp   atomic.Bool                        // sup stopped: no restart will come
	restarts atomic.Uint64                      // generations after the first

	reserved atomic.Int64 // declared bytes of jobs placed here, queued or running

	queued, running  atomic.Int64
	done, failedJobs atomic.Uint64 // jobs that ended here, each counted once
	retried          atomic.Uint64 // runs a device failure ended here, of jobs that ran again elsewhere
	busy             atomic.Int64  // nanoseconds of job time, done or failed
}

// New makes a group of devs, each with its own pool of streams (WithStreams), and runs
// WithSetup's function on each before it returns. The devices stay the caller's: close the
// group before them (with WithRestart, the group closes those that fail, and owns their
// replacements), or Shutdown it, which shuts them down too. It fails with ErrNoDevice when
// devs is empty.
func New(ctx context.Context, devs []*device.Device, opts ...Option) (*Group, error) {
	cfg := config{streams: 4, queue: 1024}
	for _, o := range opts {
		o(&cfg)
	}
	cfg.log = logging.OrDiscard(cfg.log)
	switch {
	case len(devs) == 0:
		return nil, fmt.Errorf("%w: the group was given none", ErrNoDevice)
	case cfg.streams <= 0:
		return nil, fmt.Errorf("%w: WithStreams(%d): want at least one", device.ErrInvalidArgument, cfg.streams)
	case cfg.queue <= 0:
		return nil, fmt.Errorf("%w: WithQueue(%d): want at least one", device.ErrInvalidArgument, cfg.queue)
	case cfg.policy < LeastOutstanding || cfg.policy > Memory:
		return nil, fmt.Errorf("%w: policy %d", device.ErrInvalidArgument, cfg.policy)
	case cfg.restart && cfg.open == nil:
		return nil, fmt.Errorf("%w: WithRestart: a nil open function", device.ErrInvalidArgument)
	}
	g := &Group{cfg: cfg, tokens: make(chan struct{}, cfg.queue), quit: make(chan struct{}), finished: make(chan struct{})}
	// A queue holds at most the jobs Submit queued (cfg.queue) and the reruns of idempotent
	// jobs, at most one per stream of the group, as a device fails once.
	g.room = cfg.queue + cfg.streams*len(devs)
	g.shared = make(chan *job, g.room)
	seen := map[*device.Device]bool{}
	for _, d := range devs {
		if d == nil || seen[d] {
			return nil, errors.Join(fmt.Errorf("%w: a nil or repeated device", device.ErrInvalidArgument), g.closeStreams())
		}
		seen[d] = true
		m, err := g.newMember(ctx, d)
		if err != nil {
			return nil, errors.Join(err, g.closeStreams())
		}
		g.members = append(g.members, m)
	}
	if err := g.setupAll(ctx); err != nil {
		return nil, errors.Join(err, g.closeStreams())
	}
	if cfg.open != nil {
		if err := g.supervise(ctx); err != nil {
			return nil, err
		}
	}
	for _, m := range g.members {
		for range cfg.streams {
			g.workers.Add(1)
			go m.work()
		}
	}
	return g, nil
}

func (g *Group) newMember(ctx context.Context, d *device.Device) (*member, error) {
	m := &member{g: g, queue: make(chan *job, g.room)}
	gn, err := g.newGeneration(ctx, d, false)
	if err != nil {
		return nil, err
	}
	gn.number = 1
	m.cur.Store(gn)
	return m, nil
}

// setupAll runs WithSetup's function on every member's device, at once.
func (g *Group) setupAll(ctx context.Context) error {
	if g.cfg.setup == nil {
		return nil
	}
	errs := make([]error, len(g.members))
	var wg sync.WaitGroup
	for i, m := range g.members {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = g.setUp(ctx, m.cur.Load().dev)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// setUp runs WithSetup's function on d, turning a panic into an error.
func (g *Group) setUp(ctx context.Context, d *device.Device) (err error) {
	if g.cfg.setup == nil {
		return nil
	}
	defer func() {
		if r := recover(); r != nil {
			err = &actor.PanicError{Value: r, Stack: debug.Stack()}
		}
		if err != nil {
			err = fmt.Errorf("group: setting up device %d: %w", d.Ordinal(), err)
		}
	}()
	return g.cfg.setup(ctx, d)
}

// newGeneration makes the streams of device d for a member, and reads what memory its jobs
// may declare. owned is true for a device the group opened (a restart), which it closes.
func (g *Group) newGeneration(ctx context.Context, d *device.Device, owned bool) (*generation, error) {
	gn := &generation{g: g, dev: d, free: make(chan *streams.Stream, g.cfg.streams), owned: owned}
	if g.cfg.open != nil {
		gn.replaced = make(chan struct{})
	}
	bytes, ok := g.cfg.memory[d.Ordinal()]
	if !ok {
		free, _, err := d.MemInfo(ctx)
		if err != nil {
			return nil, fmt.Errorf("group: device %d: %w", d.Ordinal(), err)
		}
		bytes = free
		if u := d.Stats().Memory; u.Limit > 0 {
			bytes = min(bytes, u.Limit-min(u.Limit, u.DeviceBytes()))
		}
	}
	gn.memBytes = int64(min(bytes, 1<<62))
	gn.mem = semaphore.NewWeighted(gn.memBytes)
	for range g.cfg.streams {
		s, err := streams.New(ctx, d)
		if err != nil {
			return nil, errors.Join(fmt.Errorf("group: device %d: %w", d.Ordinal(), err), gn.closeStreams())
		}
		gn.streams = append(gn.streams, s)
		gn.free <- s
	}
	return gn, nil
}

// Close stops the group: Submit refuses new jobs, the jobs still queued fail at once with an
// error wrapping device.ErrClosed, and Close waits for the running ones to finish, then
// closes the group's streams and the devices the group opened (WithRestart's replacements),
// and returns. The devices given to New stay open: they are the caller's, except one that
// failed and was replaced, which the group closed then. A failed device's streams are let go
// without an error (Device.Err has it). With WithRestart, Close also cancels a restart under
// way; a device open returns after that is closed.
//
// If ctx ends first, Close returns an error wrapping ctx's: the running jobs go on (their own
// contexts end them), and the group finishes closing in the background once they return.
// Safe to call more than once, and with Shutdown: a later call waits for the group to be
// closed, within its own ctx, and returns nil once it is.
func (g *Group) Close(ctx context.Context) error { return g.stop(ctx, false) }

// Shutdown stops the group as Close does, for a service shutting down, and then shuts down
// every device the group holds now with Device.Shutdown(ctx): those given to New (that were
// not replaced) and those the group opened in a restart. Afterwards every one of them is
// closed; a device replaced earlier was closed when it was. The devices' own work and the
// jobs' wait share ctx: once it ends, the devices fail what is left at once (ErrShutdown,
// which also ends the running jobs' device calls), Shutdown returns an error wrapping ctx's,
// and the devices finish closing in the background. Errors of devices that had failed are
// theirs (Device.Err), not Shutdown's. Safe to call more than once, and after Close.
func (g *Group) Shutdown(ctx context.Context) error { return g.stop(ctx, true) }

// stop is Close, and with down Shutdown.
func (g *Group) stop(ctx context.Context, down bool) error {
	if down {
		g.downCtx.CompareAndSwap(nil, &ctx)
	}
	first := g.begin()
	var err error
	select {
	case <-g.finished:
	case <-ctx.Done():
	}
	select { // finished wins over an ended ctx: the group is closed
	case <-g.finished:
		if first {
			err = g.closeErr
		}
	default:
		err = fmt.Errorf("group: closing: %w: the running jobs finish and the group closes in the background", ctx.Err())
	}
	if down {
		err = errors.Join(err, g.shutDevices(ctx))
	}
	return err
}

// begin stops taking jobs, fails the queued ones and starts finish, unless an earlier Close
// or Shutdown did; it reports whether this call did.
func (g *Group) begin() bool {
	g.mu.Lock()
	if g.closing {
		g.mu.Unlock()
		return false
	}
	g.closing = true
	g.shut.Store(true)
	close(g.quit)
	g.mu.Unlock()
	for _, m := range g.members { // the queued jobs fail now, not when a stream is next free
		m.refuseQueued()
	}
	refuseAll(g.shared)
	go g.finish()
	return true
}

// finish waits for the running jobs, then closes the streams and the devices the group owns.
func (g *Group) finish() {
	g.workers.Wait()
	g.inline.Wait()
	if g.cfg.open != nil {
		g.closeErr = g.closeSupervised()
	} else {
		g.closeErr = g.closeStreams()
	}
	close(g.finished)
}

// shutDevices shuts down every device of the group now within ctx (Shutdown), at once.
func (g *Group) shutDevices(ctx context.Context) error {
	devs := g.Devices()
	errs := make([]error, len(devs))
	var wg sync.WaitGroup
	for i, d := range devs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := d.Shutdown(ctx); err != nil && d.Err() == nil {
				errs[i] = fmt.Errorf("group: device %d: %w", d.Ordinal(), err)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// closeDevice closes d, a device the group owns or one that failed: within Shutdown's
// context once Shutdown was called, else without a bound.
func (g *Group) closeDevice(d *device.Device) error {
	if ctx := g.downCtx.Load(); ctx != nil {
		return d.Shutdown(*ctx)
	}
	return d.Close()
}

func (g *Group) closeStreams() error { return g.closeStreamsFrom(0) }

// closeStreamsFrom closes the streams of the members from the i-th on.
func (g *Group) closeStreamsFrom(i int) error {
	var errs []error
	for _, m := range g.members[i:] {
		errs = append(errs, m.cur.Load().closeStreams())
	}
	return errors.Join(errs...)
}

// closeStreams closes gn's streams. On a failed device they fail to close as everything does:
// that is the device's error, which Device.Err already gives, not the group's.
func (gn *generation) closeStreams() error {
	var errs []error
	for _, s := range gn.takeStreams() {
		errs = append(errs, s.Close(context.Background()))
	}
	if gn.down() {
		return nil
	}
	return errors.Join(errs...)
}

// healthy reports whether m takes work: its device now has not failed.
func (m *member) healthy() bool { return m.cur.Load().healthy() }

// healthy reports whether gn's device takes work: it has not failed. A device seen failed is
// out of placement for good; only a new generation brings its member back.
func (gn *generation) healthy() bool {
	if gn.failed.Load() {
		return false
	}
	if err := gn.dev.Err(); err != nil {
		gn.leave(err)
		return false
	}
	return true
}

// leave takes gn out of placement for good, logging it once: its device failed with why.
func (gn *generation) leave(why error) {
	if gn.failed.CompareAndSwap(false, true) {
		gn.g.cfg.log.Warn("group: device out of placement", slog.Int("device", gn.dev.Ordinal()),
			slog.String("name", gn.dev.String()), slog.Any("error", why))
	}
}

// down reports whether gn's device failed, or was taken out of service (a failed health
// check): an error of a job on it is then the device's.
func (gn *generation) down() bool { return gn.failed.Load() || gn.dev.Err() != nil }

// Devices are the group's devices now, in the order New was given them: after a restart
// (WithRestart), the device that replaced the failed one.
func (g *Group) Devices() []*device.Device {
	ds := make([]*device.Device, len(g.members))
	for i, m := range g.members {
		ds[i] = m.cur.Load().dev
	}
	return ds
}
