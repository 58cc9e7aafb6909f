package group

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/semaphore"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/streams"
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
}

// member is one device of the group.
type member struct {
	g       *Group
	dev     *device.Device
	queue   chan *job
	streams []*streams.Stream
	free    chan *streams.Stream // the streams no job holds
	failed  atomic.Bool

	mem      *semaphore.Weighted // Memory: what jobs declared (Bytes) and run now
	memBytes int64
	reserved atomic.Int64 // declared bytes of jobs placed here, queued or running

	queued, running  atomic.Int64
	done, failedJobs atomic.Uint64
	busy             atomic.Int64 // nanoseconds of job time, done or failed
}

// New makes a group of devs, each with its own pool of streams (WithStreams). The devices
// stay the caller's: close the group before them. It fails with ErrNoDevice when devs is
// empty.
func New(ctx context.Context, devs []*device.Device, opts ...Option) (*Group, error) {
	cfg := config{streams: 4, queue: 1024, spin: DefaultSpin}
	for _, o := range opts {
		o(&cfg)
	}
	switch {
	case len(devs) == 0:
		return nil, fmt.Errorf("%w: the group was given none", ErrNoDevice)
	case cfg.streams <= 0:
		return nil, fmt.Errorf("%w: WithStreams(%d): want at least one", device.ErrInvalidArgument, cfg.streams)
	case cfg.queue <= 0:
		return nil, fmt.Errorf("%w: WithQueue(%d): want at least one", device.ErrInvalidArgument, cfg.queue)
	case cfg.policy < LeastOutstanding || cfg.policy > Memory:
		return nil, fmt.Errorf("%w: policy %d", device.ErrInvalidArgument, cfg.policy)
	}
	g := &Group{cfg: cfg, tokens: make(chan struct{}, cfg.queue), quit: make(chan struct{})}
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
	for _, m := range g.members {
		for range m.streams {
			g.workers.Add(1)
			go m.work()
		}
	}
	return g, nil
}

func (g *Group) newMember(ctx context.Context, d *device.Device) (*member, error) {
	m := &member{g: g, dev: d, queue: make(chan *job, g.room), free: make(chan *streams.Stream, g.cfg.streams)}
	bytes, ok := g.cfg.memory[d.Ordinal()]
	if !ok {
		free, _, err := d.MemInfo(ctx)
		if err != nil {
			return nil, fmt.Errorf("group: device %d: %w", d.Ordinal(), err)
		}
		bytes = free
		if u := d.Usage(); u.Limit > 0 {
			bytes = min(bytes, u.Limit-min(u.Limit, u.DeviceBytes()))
		}
	}
	m.memBytes = int64(min(bytes, 1<<62))
	m.mem = semaphore.NewWeighted(m.memBytes)
	for range g.cfg.streams {
		s, err := streams.New(ctx, d)
		if err != nil {
			return nil, errors.Join(fmt.Errorf("group: device %d: %w", d.Ordinal(), err), m.closeStreams())
		}
		m.streams = append(m.streams, s)
		m.free <- s
	}
	return m, nil
}

// Close stops the group: Submit refuses new jobs, the jobs still queued fail with an error
// wrapping device.ErrClosed, and Close returns once the running ones have finished and the
// group's streams are closed. The devices stay open. A failed device's streams are let go
// without an error (Device.Err has it). Safe to call more than once.
func (g *Group) Close() error {
	g.mu.Lock()
	if g.closing {
		g.mu.Unlock()
		g.workers.Wait()
		g.inline.Wait()
		return nil
	}
	g.closing = true
	close(g.quit)
	g.mu.Unlock()
	for _, m := range g.members { // the queued jobs fail now, not when a stream is next free
		m.refuseQueued()
	}
	refuseAll(g.shared)
	g.workers.Wait()
	g.inline.Wait()
	return g.closeStreams()
}

func (g *Group) closeStreams() error {
	var errs []error
	for _, m := range g.members {
		errs = append(errs, m.closeStreams())
	}
	return errors.Join(errs...)
}

// closeStreams closes m's streams. On a failed device they fail to close as everything does:
// that is the device's error, which Device.Err already gives, not the group's.
func (m *member) closeStreams() error {
	var errs []error
	for _, s := range m.streams {
		errs = append(errs, s.Close(context.Background()))
	}
	m.streams = nil
	if m.dev.Err() != nil {
		return nil
	}
	return errors.Join(errs...)
}

// healthy reports whether m takes work: its device has not failed. A device seen failed is
// out of placement for good.
func (m *member) healthy() bool {
	if m.failed.Load() {
		return false
	}
	if m.dev.Err() != nil {
		m.failed.Store(true)
		return false
	}
	return true
}

// Devices are the group's devices, in the order New was given them.
func (g *Group) Devices() []*device.Device {
	ds := make([]*device.Device, len(g.members))
	for i, m := range g.members {
		ds[i] = m.dev
	}
	return ds
}
