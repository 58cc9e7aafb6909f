package device

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// Device is one GPU behind its actor. All methods are safe for concurrent use.
type Device struct {
	ordinal  int
	kind     BackendKind
	be       backend.Backend
	act      *actor.Actor
	props    Properties
	log      *zap.Logger
	cacheDir string
	failed   atomic.Pointer[error]
	acct     accounting // what gpuactor holds on the device (accounting.go)
	pinned   atomic.Pointer[PinnedPool]

	// Owned by the actor thread: never touched elsewhere.
	dev      backend.Device
	stream   backend.Stream
	tracker  *Tracker
	live     liveSet
	closeErr error
	ext      map[any]any // domain packages' per-device state (Local)
}

// liveSet tracks what the device must release on Close. Actor thread only.
type liveSet struct {
	buffers bufList // live.go
	hosts   map[*HostBuffer]struct{}
	modules map[*Module]struct{}
}

// Count is the number of devices the configured backend sees.
func Count(ctx context.Context, opts ...Option) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	c := newConfig(opts)
	be, err := selectBackend(c)
	if err != nil {
		return 0, err
	}
	return be.DeviceCount()
}

// Open starts the actor of device ordinal and returns once the device's context is ready.
func Open(ctx context.Context, ordinal int, opts ...Option) (*Device, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c := newConfig(opts)
	be, err := selectBackend(c)
	if err != nil {
		return nil, err
	}
	return open(ctx, be, c, ordinal)
}

// OpenAll opens every device of the backend, in parallel, sharing one backend (and, on the
// simulator, one simulated machine). On error, the devices already opened are closed.
func OpenAll(ctx context.Context, opts ...Option) ([]*Device, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c := newConfig(opts)
	be, err := selectBackend(c)
	if err != nil {
		return nil, err
	}
	n, err := be.DeviceCount()
	if err != nil {
		return nil, fmt.Errorf("gpuactor: counting devices: %w", err)
	}
	devs := make([]*Device, n)
	g, gctx := errgroup.WithContext(ctx)
	for i := range devs {
		g.Go(func() error {
			d, err := open(gctx, be, c, i)
			devs[i] = d
			return err
		})
	}
	if err := g.Wait(); err != nil {
		for _, d := range devs {
			if d != nil {
				_ = d.Close()
			}
		}
		return nil, err
	}
	return devs, nil
}

func open(ctx context.Context, be backend.Backend, c *config, ordinal int) (*Device, error) {
	n, err := be.DeviceCount()
	if err != nil {
		return nil, fmt.Errorf("gpuactor: counting devices: %w", err)
	}
	if ordinal < 0 || ordinal >= n {
		return nil, invalid("device ordinal %d out of range: the %s backend has %d device(s)", ordinal, be.Name(), n)
	}
	d := &Device{
		ordinal:  ordinal,
		kind:     BackendKind(be.Name()),
		be:       be,
		log:      c.logger.With(zap.Int("device", ordinal), zap.String("backend", be.Name())),
		cacheDir: c.kernelCacheDir(),
		acct:     accounting{limit: c.memLimit},
		live: liveSet{
			hosts:   map[*HostBuffer]struct{}{},
			modules: map[*Module]struct{}{},
		},
	}
	opts := append([]actor.Option{
		actor.WithName(fmt.Sprintf("gpuactor/%s/%d", be.Name(), ordinal)),
		actor.WithInit(d.init),
		actor.WithShutdown(d.release),
		actor.WithGuard(d.failure),
		actor.WithErrorObserver(d.note),
		actor.WithIdle(d.poll),
	}, c.actorOpts...)
	act, err := actor.New(opts...)
	if err != nil {
		return nil, fmt.Errorf("gpuactor: opening device %d: %w", ordinal, err)
	}
	d.act = act
	if err := ctx.Err(); err != nil {
		_ = d.Close()
		return nil, err
	}
	d.log.Debug("device open", zap.String("name", d.props.Name))
	return d, nil
}

// poll is the actor's idle hook: it runs completions the GPU has reached.
func (d *Device) poll(waiting bool, now time.Duration) bool {
	if d.tracker == nil {
		return false
	}
	return d.tracker.poll(waiting, now)
}

// init runs on the actor's locked thread before any op.
func (d *Device) init() error {
	dev, err := d.be.Open(d.ordinal)
	if err != nil {
		return err
	}
	d.dev = dev
	props, err := readProperties(d.be, dev)
	if err != nil {
		return err
	}
	d.props = props
	s, err := dev.StreamCreate(backend.StreamNonBlocking, 0)
	if err != nil {
		return fmt.Errorf("gpuactor: creating the device stream: %w", err)
	}
	d.stream = s
	d.tracker = newTracker(dev, d.note)
	return nil
}

// release runs on the actor thread after the last op: it frees what the caller left behind.
func (d *Device) release() {
	if d.dev == nil || d.tracker == nil {
		return
	}
	var errs []error
	errs = append(errs, d.tracker.close()) // domain packages' streams and resources first
	if d.failure() == nil {
		errs = append(errs, d.dev.StreamSynchronize(d.stream))
	}
	for b := d.live.buffers.head; b != nil; {
		next := b.next // freeBuffer unlinks b
		errs = append(errs, d.freeBuffer(b))
		b = next
	}
	for h := range d.live.hosts {
		errs = append(errs, d.freeHost(h))
	}
	for m := range d.live.modules {
		errs = append(errs, d.unload(m))
	}
	errs = append(errs, d.dev.StreamDestroy(d.stream))
	if d.failure() == nil {
		d.closeErr = errors.Join(errs...)
	}
}

// Close finishes the work already sent, frees every buffer, host buffer and module still
// live, and stops the actor. Later calls fail with ErrClosed. Close is idempotent.
func (d *Device) Close() error {
	if err := d.act.Close(); err != nil { // idempotent: later calls wait for nothing
		return err
	}
	return d.closeErr // written by release on the actor, before Close returns
}

// Ordinal is the device's index in its backend.
func (d *Device) Ordinal() int { return d.ordinal }

// Backend is the backend the device runs on (BackendCUDA or BackendSim).
func (d *Device) Backend() BackendKind { return d.kind }

// Properties are the device's fixed properties, read when it was opened.
func (d *Device) Properties() Properties { return d.props }

// String names the device for logs.
func (d *Device) String() string {
	return fmt.Sprintf("device %d (%s, %s)", d.ordinal, d.props.Name, d.kind)
}

// Err is the sticky error that failed the device, or nil while it is healthy.
func (d *Device) Err() error { return d.failure() }

func (d *Device) failure() error {
	if p := d.failed.Load(); p != nil {
		return *p
	}
	return nil
}

// note records a sticky error: the device is unusable from then on.
func (d *Device) note(err error) {
	if err == nil || !cudaerr.IsSticky(err) {
		return
	}
	failed := fmt.Errorf("%w: %w", ErrDeviceFailed, err)
	if d.failed.CompareAndSwap(nil, &failed) {
		d.log.Error("device failed with a sticky error", zap.Error(err))
	}
}

// call runs fn on the actor thread; the actor's guard refuses it once the device has failed,
// and its error observer notes sticky faults (see open).
func call[T any](ctx context.Context, d *Device, fn func() (T, error)) *actor.Future[T] {
	return actor.Call(ctx, d.act, fn)
}

// do runs fn on the actor thread and waits for it.
func do(ctx context.Context, d *Device, fn func() error) error {
	_, err := call(ctx, d, func() (struct{}, error) { return struct{}{}, fn() }).Await(ctx)
	return err
}

// MemInfo is the device's free and total memory in bytes, now.
func (d *Device) MemInfo(ctx context.Context) (free, total uint64, err error) {
	type pair struct{ free, total uint64 }
	p, err := call(ctx, d, func() (pair, error) {
		f, t, err := d.dev.MemInfo()
		return pair{f, t}, err
	}).Await(ctx)
	return p.free, p.total, err
}

// Synchronize waits until all work sent to the device so far has completed.
func (d *Device) Synchronize(ctx context.Context) error {
	return do(ctx, d, func() error {
		if err := d.dev.StreamSynchronize(d.stream); err != nil {
			return err
		}
		return d.dev.Synchronize()
	})
}

// OpenOn opens device ordinal of be, a backend made inside this module: how the module's
// benchmarks run gpuactor over a wrapped backend (internal/nullgpu). be's type is internal,
// so code outside the module has no backend to give it. The options that pick a backend
// (WithBackend, WithSimulator) do not apply.
func OpenOn(ctx context.Context, be backend.Backend, ordinal int, opts ...Option) (*Device, error) {
	if be == nil {
		return nil, invalid("OpenOn needs a backend")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return open(ctx, be, newConfig(opts), ordinal)
}
