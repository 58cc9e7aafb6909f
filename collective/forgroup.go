package collective

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/group"
	"github.com/gpuactor/gpuactor/internal/core"
	"github.com/gpuactor/gpuactor/streams"
)

// Ranks is a communicator over every device of a fan-out group (ForGroup), with a stream
// per rank: the way to run a collective job, a function that every device runs at once as
// its rank. Its methods are safe for concurrent use; Run calls of one Ranks must be made in
// the same order by every rank, which Run does by running all ranks itself.
type Ranks struct {
	comms   []*Comm
	streams []*streams.Stream
	byDev   map[*device.Device]int
}

// ForGroup makes a communicator over g's devices as they are now (NewLocal, rank i on
// g.Devices()[i]) and a stream per device for its jobs. A device the group restarts is a
// new device, outside the communicator: make a new Ranks after a restart.
func ForGroup(ctx context.Context, g *group.Group, opts ...Option) (*Ranks, error) {
	if g == nil {
		return nil, core.Invalid("collective: ForGroup of a nil group")
	}
	devs := g.Devices()
	comms, err := NewLocal(ctx, devs, opts...)
	if err != nil {
		return nil, err
	}
	r := &Ranks{comms: comms, streams: make([]*streams.Stream, len(devs)), byDev: map[*device.Device]int{}}
	for i, d := range devs {
		r.byDev[d] = i
		if r.streams[i], err = streams.New(ctx, d); err != nil {
			return nil, errors.Join(err, r.Close(context.WithoutCancel(ctx)))
		}
	}
	return r, nil
}

// Comms is the ranks' communicators, rank i at index i.
func (r *Ranks) Comms() []*Comm { return r.comms }

// Of is d's rank, or nil when d is not one of them.
func (r *Ranks) Of(d *device.Device) *Comm {
	i, ok := r.byDev[d]
	if !ok {
		return nil
	}
	return r.comms[i]
}

// Run runs job on every rank concurrently, each with its communicator and its stream, and
// returns once every job has returned and the work each queued on its stream has run. A
// job's collectives wait for their peers on the GPU: if a job fails, its peers may wait for
// a collective it never launched, so when any job returns an error Run aborts every rank
// (later Runs fail with ErrAborted) and returns the errors joined.
func (r *Ranks) Run(ctx context.Context, job func(ctx context.Context, c *Comm, s *streams.Stream) error) error {
	if job == nil {
		return core.Invalid("collective: Run of a nil job")
	}
	errs := make([]error, len(r.comms))
	var abortOnce sync.Once
	var abortErr error
	abortAll := func() {
		abortOnce.Do(func() {
			for _, c := range r.comms {
				c.abortReq.Store(true) // a wait on an actor for this comm ends now
			}
			for _, c := range r.comms {
				abortErr = errors.Join(abortErr, c.Abort(context.WithoutCancel(ctx)))
			}
		})
	}
	var wg sync.WaitGroup
	for i, c := range r.comms {
		wg.Go(func() {
			s := r.streams[i]
			if err := job(ctx, c, s); err != nil {
				errs[i] = fmt.Errorf("collective: rank %d's job: %w", i, err)
				abortAll() // at once: the peers' collectives may be waiting for this rank
				return
			}
			if err := s.Synchronize(ctx); err != nil {
				errs[i] = fmt.Errorf("collective: rank %d's job: %w", i, err)
				abortAll()
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return errors.Join(err, abortErr)
	}
	return nil
}

// Close closes every rank's communicator and stream.
func (r *Ranks) Close(ctx context.Context) error {
	errs := make([]error, len(r.comms))
	var wg sync.WaitGroup
	for i, c := range r.comms {
		wg.Go(func() { errs[i] = c.Close(ctx) })
	}
	wg.Wait()
	for _, s := range r.streams {
		if s != nil {
			errs = append(errs, s.Close(ctx))
		}
	}
	return errors.Join(errs...)
}
