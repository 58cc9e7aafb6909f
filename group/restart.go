package group

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/streams"
	"github.com/gpuactor/gpuactor/supervise"
)

// DefaultRestartCheck is how often, with WithRestart, each member's device is looked at for a
// failure (Device.Err) when no job is there to find it; supervise.WithCheckEvery changes it.
const DefaultRestartCheck = 10 * time.Millisecond

// WithRestart brings a failed device back: when a device of the group fails, the group takes
// it out of placement as it always does (its queued jobs move to the others, its running ones
// fail or, Idempotent, run again elsewhere), closes its streams and the failed device, and
// calls open with the failed device (for its ordinal and String; it is closed) for a device
// to replace it. Once open returns one, the group makes its streams, reads its memory as New
// does, and places work on it again: Devices and Stats show the new device in the old one's
// place, and Stats counts the restart.
//
// The restarts follow the supervise package's policy, set by opts: at most
// supervise.WithRestarts in a window (default 3 a minute), after supervise.WithBackoff
// (default 100 ms), with the OnFailure, OnRestart and OnGiveUp callbacks; the group's
// WithLogger gets the restarts' lines unless a supervise.WithLogger is given here. An
// error from open counts as a failed restart. Once the restarts are spent the member stays
// failed, as it would without WithRestart. A failure is seen when a job on the device meets
// it or when the device learns of it (checked every DefaultRestartCheck, or
// supervise.WithCheckEvery); supervise.WithHealthCheck also asks an idle device whether it
// still answers, and replaces one that does not.
//
// open runs on a goroutine of the group, with a context that Close cancels: it must return
// soon after that context ends; a device it returns after Close began is closed. While every
// device of the group is failed and one is restarting, new jobs wait in the queue for it
// instead of failing with ErrNoDevice.
//
// Ownership: the devices given to New stay the caller's while they work, but one that fails
// is closed by the group (Close is idempotent, so the caller's own Close of it stays
// harmless); the devices open returned are the group's, and Close closes them after their
// streams. In-process a GPU that took a sticky fault cannot be opened again, so open should
// open the device in a process of its own (device.Isolated) for the restart to succeed.
func WithRestart(open func(ctx context.Context, failed *device.Device) (*device.Device, error), opts ...supervise.Option) Option {
	return func(c *config) {
		c.restart, c.open = true, open
		c.restarts = append([]supervise.Option{supervise.WithCheckEvery(DefaultRestartCheck)}, opts...)
	}
}

// errReplaced is why a generation whose device has no error of its own (it failed its health
// check) left placement.
var errReplaced = errors.New("the supervisor is replacing it")

// generation is a member's device as it is now, with its streams and memory; a restart makes
// a new one and swaps the member's pointer to it, so that the per-job path reads it with one
// atomic load and no lock. It is the supervisor's child.
type generation struct {
	g        *Group
	dev      *device.Device
	streams  []*streams.Stream    // under lent.mu once the workers start
	free     chan *streams.Stream // the streams no job holds
	lent     lending              // replaces a stream a job closed (lend.go)
	failed   atomic.Bool
	mem      *semaphore.Weighted // Memory: what jobs declared (Bytes) and run now
	memBytes int64
	owned    bool          // opened by a restart: the group closes the device
	number   uint64        // the generation: 1 for the device given to New, then one more each restart
	replaced chan struct{} // closed once a new generation replaced this one: wakes its workers

	closeOnce sync.Once
	closeErr  error
}

// Err is the device's failure, for the supervisor.
func (gn *generation) Err() error { return gn.dev.Err() }

// Health asks the device whether it still answers (supervise.WithHealthCheck).
func (gn *generation) Health(ctx context.Context) error { return gn.dev.Health(ctx) }

// Close closes gn's streams, then its device when the group owns it or it is being replaced
// (it failed, or failed its health check): the supervisor calls it on a failure, before the
// restart, and when the group closes. Idempotent.
func (gn *generation) Close() error {
	gn.closeOnce.Do(func() {
		replacing := !gn.g.shut.Load()
		if replacing {
			gn.leave(errReplaced) // a failed health check leaves Err nil: leave placement now
		}
		err := gn.closeStreams()
		if gn.owned || replacing || gn.down() {
			cerr := gn.g.closeDevice(gn.dev)
			if !gn.down() {
				err = errors.Join(err, cerr)
			}
		}
		gn.closeErr = err
	})
	return gn.closeErr
}

// supervise starts a supervisor for each member (WithRestart), and a goroutine that notes when
// one gives up.
func (g *Group) supervise(ctx context.Context) error {
	g.life, g.endLife = context.WithCancel(context.WithoutCancel(ctx))
	for i, m := range g.members {
		first := m.cur.Load()
		start := func(ctx context.Context) (*generation, error) {
			if first != nil { // the device given to New, already running
				gn := first
				first = nil
				return gn, nil
			}
			return m.reopen(ctx)
		}
		// The group's logger, with the device's ordinal, first: the caller's own
		// supervise.WithLogger, among restarts, wins.
		opts := append([]supervise.Option{supervise.WithLogger(g.cfg.log.With(slog.Int("device", m.cur.Load().dev.Ordinal())))},
			g.cfg.restarts...)
		sup, err := supervise.New(g.life, start, opts...)
		if err != nil { // the first start returns the running device: only a bug gets here
			g.shut.Store(true) // what closes now is not replaced: the devices stay the caller's
			g.endLife()
			for _, m := range g.members[:i] {
				_ = m.sup.Close()
			}
			return errors.Join(fmt.Errorf("group: supervising device %d: %w", m.cur.Load().dev.Ordinal(), err), g.closeStreamsFrom(i))
		}
		m.sup = sup
	}
	for _, m := range g.members {
		g.watchers.Add(1)
		go func() {
			defer g.watchers.Done()
			<-m.sup.Done()
			m.gaveUp.Store(true)
			g.noneLeft()
		}()
	}
	return nil
}

// reopen is a restart: it asks open for a device to replace m's failed one, makes its
// generation, and swaps it in, waking m's workers. ctx is the supervisor's, which Close ends.
func (m *member) reopen(ctx context.Context) (*generation, error) {
	old := m.cur.Load()
	ord := old.dev.Ordinal()
	d, err := m.g.cfg.open(ctx, old.dev)
	switch {
	case err != nil:
		return nil, fmt.Errorf("group: reopening device %d: %w", ord, err)
	case d == nil:
		return nil, fmt.Errorf("%w: group: reopening device %d: open returned neither a device nor an error", device.ErrInvalidArgument, ord)
	case d == old.dev:
		return nil, fmt.Errorf("%w: group: reopening device %d: open returned the failed device", device.ErrInvalidArgument, ord)
	}
	if err := ctx.Err(); err != nil { // the group is closing: the new device is not needed
		return nil, errors.Join(err, d.Close())
	}
	gn, err := m.g.newGeneration(ctx, d, true)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("group: device %d, reopened: %w", ord, err), d.Close())
	}
	if err := m.g.setUp(ctx, d); err != nil {
		return nil, errors.Join(err, gn.closeStreams(), d.Close())
	}
	n := m.restarts.Add(1)
	gn.number = old.number + 1
	m.g.cfg.log.Info("group: device reopened", slog.Int("device", ord), slog.String("name", d.String()),
		slog.Uint64("restarts", n))
	m.cur.Store(gn)
	close(old.replaced)
	m.g.peers.Range(func(k, _ any) bool { // MapTo's links of the failed device: gone with it
		if pair := k.([2]*device.Device); pair[0] == old.dev || pair[1] == old.dev {
			m.g.peers.Delete(k)
		}
		return true
	})
	return gn, nil
}

// restarting reports whether m will take work again: its device failed, or is about to be
// seen failed, and its supervisor has not given up.
func (m *member) restarting() bool { return m.sup != nil && !m.gaveUp.Load() }

// live reports whether m takes work now or will once restarted.
func (m *member) live() bool { return m.healthy() || m.restarting() }

// pending reports whether a restarting member could take j once back: where j waits, in the
// shared queue, when no device can take it now.
func (g *Group) pending(j *job) bool {
	for _, m := range g.members {
		if m.restarting() && j.cfg.bytes <= m.cur.Load().memBytes {
			return true
		}
	}
	return false
}

// anyLive reports whether some member takes work now or will once restarted.
func (g *Group) anyLive() bool {
	for _, m := range g.members {
		if m.live() {
			return true
		}
	}
	return false
}

// noneLeft fails the jobs waiting in the shared queue with ErrNoDevice once no device can take
// them: every device failed, and no restart is under way or left.
func (g *Group) noneLeft() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closing || g.anyLive() {
		return
	}
	refuseAllWith(g.shared, fmt.Errorf("%w: every device failed and no restart is left", ErrNoDevice))
}

// closeSupervised ends the restarts, then closes each member's device now: its streams, and
// the device when the group owns it.
func (g *Group) closeSupervised() error {
	g.endLife()
	var errs []error
	for _, m := range g.members {
		errs = append(errs, m.sup.Close())
	}
	g.watchers.Wait()
	return errors.Join(errs...)
}
