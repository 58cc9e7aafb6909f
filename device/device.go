package device

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"

	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
)

// Device is one GPU behind its actor. All methods are safe for concurrent use.
type Device core.Device

// info is what a Device keeps of this package's: its description and how it was opened.
type info struct {
	props    Properties
	kind     BackendKind
	cacheDir string
	cache    *kernelCache // nil: no cache
	isolated bool
}

func (d *Device) core() *core.Device { return (*core.Device)(d) }

// info is the device's description. A device that core opened without one (over a wrapped
// backend, in the module's tests and benchmarks) reads its properties on first use.
func (d *Device) info() *info {
	if d == nil {
		return &info{} // a nil device: zero properties, no backend
	}
	cd := d.core()
	return cd.InfoOr(func() any {
		inf := &info{kind: kindOf(cd.Backend())}
		inf.props, _ = core.Run(context.Background(), cd, func(rt backend.Device, _ *core.Tracker) (Properties, error) {
			return readProperties(cd.Backend(), rt)
		}).Await(context.Background())
		return inf
	}).(*info)
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
	if c.isolated != nil {
		d, _, err := openIsolated(ctx, c, ordinal)
		return d, err
	}
	be, err := selectBackend(c)
	if err != nil {
		return nil, err
	}
	return open(ctx, be, c, ordinal, nil)
}

// OpenAll opens every device of the backend, in parallel, sharing one backend (and, on the
// simulator, one simulated machine). On error, the devices already opened are closed.
func OpenAll(ctx context.Context, opts ...Option) ([]*Device, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c := newConfig(opts)
	var first *Device
	var openOne func(ctx context.Context, i int) (*Device, error)
	var n int
	if c.isolated != nil {
		// A worker per device: the first one says how many there are.
		d, rb, err := openIsolated(ctx, c, 0)
		if err != nil {
			return nil, err
		}
		if n, err = rb.DeviceCount(); err != nil {
			return nil, errors.Join(fmt.Errorf("gpuactor: counting devices: %w", err), d.Close())
		}
		first = d
		openOne = func(ctx context.Context, i int) (*Device, error) {
			d, _, err := openIsolated(ctx, c, i)
			return d, err
		}
	} else {
		be, err := selectBackend(c)
		if err != nil {
			return nil, err
		}
		if n, err = be.DeviceCount(); err != nil {
			return nil, fmt.Errorf("gpuactor: counting devices: %w", err)
		}
		openOne = func(ctx context.Context, i int) (*Device, error) { return open(ctx, be, c, i, nil) }
	}
	devs := make([]*Device, n)
	g, gctx := errgroup.WithContext(ctx)
	for i := range devs {
		if i == 0 && first != nil {
			devs[0] = first
			continue
		}
		g.Go(func() error {
			d, err := openOne(gctx, i)
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

// kindOf is the kind of backend be: an isolated device's backend is named "isolated-" and
// the worker's, and its kind is the worker's.
func kindOf(be backend.Backend) BackendKind {
	return BackendKind(strings.TrimPrefix(be.Name(), "isolated-"))
}

// open opens device ordinal of be. own is what the device owns besides (an isolated device's
// worker), closed once the device has released everything; nil for a device in process.
func open(ctx context.Context, be backend.Backend, c *config, ordinal int, own io.Closer) (*Device, error) {
	flags, err := c.openFlags()
	if err != nil {
		return nil, err
	}
	kind, cacheDir, isolated := kindOf(be), c.kernelCacheDir(), own != nil
	waiterQuery, err := c.tuning.WaiterQuery.enabled()
	if err != nil {
		return nil, err
	}
	if c.cacheLimit < 0 {
		return nil, core.Invalid("WithKernelCacheLimit(%d): want 0 (no limit) or a size in bytes", c.cacheLimit)
	}
	cache := &kernelCache{dir: cacheDir, limit: c.cacheLimit}
	var onStuck func()
	if isolated {
		// A GPU stuck in a kernel that never ends is freed only when the process holding it
		// ends: end the worker now, not when the device is closed.
		onStuck = func() {
			if s, ok := own.(interface{ Stop() error }); ok {
				go s.Stop() // not Close: the actor still reads memory shared with the worker
			} else {
				go own.Close()
			}
		}
	}
	cd, err := core.Open(ctx, be, core.Config{
		Logger:       c.logger,
		MemLimit:     c.memLimit,
		StagingLimit: c.stagingLimit,
		Watchdog:     c.watchdog,
		Tuning:       c.tuning.options(),
		Unlocked:     isolated, // its calls go to the worker, not to the runtime
		Closer:       own,
		OnStuck:      onStuck,
		OpenFlags:    flags,
		WaiterQuery:  waiterQuery,
		Describe: func(be backend.Backend, rt backend.Device) (any, core.Limits, error) {
			props, err := readProperties(be, rt)
			if err != nil {
				return nil, core.Limits{}, err
			}
			lim := core.Limits{MaxBlock: props.MaxBlock, MaxGrid: props.MaxGrid, MaxThreadsPerBlock: props.MaxThreadsPerBlock,
				MaxSharedMem: max(props.SharedMemPerBlock, props.SharedMemPerBlockOptin)}
			return &info{props: props, kind: kind, cacheDir: cacheDir, cache: cache, isolated: isolated}, lim, nil
		},
	}, ordinal)
	if err != nil {
		return nil, err
	}
	d := (*Device)(cd)
	cd.Log().Debug("device described", zap.String("name", d.info().props.Name))
	return d, nil
}

// Close finishes the work already sent, frees every buffer, host buffer and module still
// live, and stops the actor; it returns once all of that is done. Later calls on the device,
// and on what it made, fail with ErrClosed. Close is idempotent. Unlike the Close of what the
// device makes, it takes no context: it is a program's last call on the device (defer
// dev.Close()), and it waits for everything already sent.
//
// It returns what went wrong releasing a healthy device's resources, and nil for a device that
// failed, before or while closing: Err says how. After a clean Close, Err stays nil and Health
// fails with ErrClosed: a closed device is closed, not failed. An isolated device whose worker
// was killed (or crashed) before or during Close is failed with isolate.ErrWorkerDied by the
// time Close returns, every time, however the kill and the close raced; only the worker's own
// exit at Close's request is a clean close.
func (d *Device) Close() error { return d.core().Close() }

// Shutdown stops the device within ctx, for a service shutting down: it refuses new work at
// once (with ErrClosed) and waits for the work already sent, as Close does, until ctx ends.
// If ctx ends first, what is left fails at once — messages not yet run, and the futures of
// operations the GPU has not finished — with an error wrapping ErrShutdown and ErrClosed, and
// Shutdown returns ctx's error; the device then finishes closing in the background, freeing
// everything once the GPU has passed the work it was given, which no deadline cuts short.
// Every operation accepted before Shutdown either completes or fails with ErrShutdown.
func (d *Device) Shutdown(ctx context.Context) error { return d.core().Shutdown(ctx) }

// Ordinal is the device's index in its backend.
func (d *Device) Ordinal() int { return d.core().Ordinal() }

// Backend is the backend the device runs on (BackendCUDA or BackendSim).
func (d *Device) Backend() BackendKind { return d.info().kind }

// Properties are the device's fixed properties, read when it was opened.
func (d *Device) Properties() Properties { return d.info().props }

// String names the device for logs.
func (d *Device) String() string {
	return fmt.Sprintf("device %d (%s, %s)", d.Ordinal(), d.info().props.Name, d.info().kind)
}

// Err is the sticky error that failed the device, or nil while it is healthy.
func (d *Device) Err() error { return d.core().Err() }

// MemInfo is the device's free and total memory in bytes, now; it returns once the device's
// actor has asked the runtime.
func (d *Device) MemInfo(ctx context.Context) (free, total uint64, err error) {
	return d.core().MemInfo(ctx)
}

// Synchronize waits until all work sent to the device so far has completed on the GPU.
func (d *Device) Synchronize(ctx context.Context) error {
	if d == nil {
		return core.Invalid("Synchronize of a nil device")
	}
	return d.core().Synchronize(ctx)
}
