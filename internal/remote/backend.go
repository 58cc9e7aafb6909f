package remote

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/worker"
)

// Backend is a backend.Backend whose devices live in a worker process: every Device method
// is one call to the worker, which runs it on a real backend (Serve) and answers. One worker
// serves one device at a time, since a runtime device belongs to the thread that opened it.
type Backend struct {
	proc  *worker.Process
	name  string
	count int

	health backend.HealthBook
	host   regionTable // HostAlloc's memory, shared with the worker

	failure func(lost error) error // WithFailure
	calls   atomic.Uint64          // calls made (not posts): for tests of what the board spares

	mu  sync.Mutex
	dev *Device

	settled sync.Once // settle's
}

// Option configures New.
type Option func(*Backend)

// WithFailure sets the error the devices' Health fails with when the worker is gone: wrap's
// result for the *LostError (the default is the *LostError itself). The device layer passes
// one that adds its own device-failed error, so that a failure it did not see through a call
// reads as one it did.
func WithFailure(wrap func(lost error) error) Option {
	return func(b *Backend) { b.failure = wrap }
}

var _ backend.Backend = (*Backend)(nil)

// Start starts a worker with the given options and the error codec the remote backend needs
// (Codec); pass it, or a function around it, to New.
func Start(ctx context.Context, opts ...worker.Option) (*worker.Process, error) {
	return worker.Start(ctx, append(opts[:len(opts):len(opts)], worker.WithErrorCodec(Codec{}))...)
}

// New starts a worker with start (Start, or one that adds options to it; the worker must run
// Serve) and returns the backend its devices are served by. It completes once the worker
// answered its first call with its backend's name and device count; on error no worker is
// left running. When the worker dies, each device's Health fails with an error matching
// worker.ErrWorkerDied and cudaerr.DevicesUnavailable, and so does every call.
func New(ctx context.Context, start func(context.Context) (*worker.Process, error), opts ...Option) (*Backend, error) {
	proc, err := start(ctx)
	if err != nil {
		return nil, err
	}
	b := &Backend{proc: proc}
	for _, o := range opts {
		o(b)
	}
	name, err := b.info(ctx, infoName)
	if err == nil {
		b.count, err = b.infoInt(ctx, infoCount)
		if errors.Is(err, cudaerr.NoDevice) { // a machine with none still opens: DeviceCount says so
			b.count, err = 0, nil
		}
	}
	if err != nil {
		_ = proc.Close()
		return nil, fmt.Errorf("remote: asking the worker about its backend: %w", err)
	}
	b.name = "isolated-" + string(name.b)
	go b.watch()
	return b, nil
}

// watch fails every device's Health once the worker died, so that a device actor sees the
// failure without a call of its own.
func (b *Backend) watch() {
	<-b.proc.Done()
	b.settle()
}

// settle records how the reaped worker ended: a death (the process's Err) fails every
// device's Health; a clean close, which Close asked for, fails nothing, so that a closed
// device reads as closed, not as failed. Once, from watch or from Close, whichever is first.
func (b *Backend) settle() {
	b.settled.Do(func() {
		died := b.proc.Err()
		if died == nil {
			return
		}
		err := b.lost(died)
		if b.failure != nil {
			err = b.failure(err)
		}
		for i := range max(b.count, 1) {
			b.health.Of(i).Fail(err)
		}
	})
}

// Process is the worker serving the backend.
func (b *Backend) Process() *worker.Process { return b.proc }

// Close ends the worker: it asks it to exit, and kills it if it does not (worker.Process.Close),
// and unmaps what the parent shares with it for the device's own use (the event board): the
// device must not be used any more. Calls fail from then on (with a *LostError wrapping
// worker.ErrClosed); the devices' Health fails only if the worker died rather than exiting as
// asked, and then it has failed by the time Close returns. It returns once the worker is
// reaped.
func (b *Backend) Close() error {
	err := b.proc.Close()
	b.settle()
	b.mu.Lock()
	if b.dev != nil {
		b.dev.closeBoard()
	}
	b.mu.Unlock()
	return err
}

// Stop ends the worker at once (worker.Process.Abort), but keeps the memory shared with it
// mapped: for a device stuck in a kernel that never ends, which only the worker's end frees,
// and whose goroutine may still be reading that memory. Close it afterwards.
func (b *Backend) Stop() error {
	b.proc.Abort()
	b.settle()
	return nil
}

// Name is "isolated-" and the worker backend's name.
func (b *Backend) Name() string { return b.name }

// RuntimeVersion is the worker backend's.
func (b *Backend) RuntimeVersion() (int, error) { return b.infoInt(context.Background(), infoRuntime) }

// DriverVersion is the worker backend's.
func (b *Backend) DriverVersion() (int, error) { return b.infoInt(context.Background(), infoDriver) }

// DeviceCount is the worker backend's.
func (b *Backend) DeviceCount() (int, error) { return b.infoInt(context.Background(), infoCount) }

// Health is device ordinal's failure as the parent sees it: failed by the worker's death, or
// by the device layer on a sticky error.
func (b *Backend) Health(ordinal int) *backend.Health { return b.health.Of(ordinal) }

// Open opens device ordinal in the worker, on the worker's serving thread. Opening the open
// ordinal again returns the same Device; another ordinal is refused while one is open, as one
// worker serves one device.
func (b *Backend) Open(ordinal int) (backend.Device, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.dev != nil {
		if b.dev.ordinal == ordinal {
			return b.dev, nil
		}
		return nil, &cudaerr.Error{Op: "cudaSetDevice", Code: cudaerr.InvalidDevice,
			Message: fmt.Sprintf("this worker serves device %d; device %d needs a worker of its own", b.dev.ordinal, ordinal)}
	}
	e := request(mOpen)
	e.i64(int64(ordinal))
	if _, err := b.call(e); err != nil {
		return nil, err
	}
	b.dev = &Device{b: b, ordinal: ordinal}
	b.dev.openBoard()
	return b.dev, nil
}

const (
	infoName = iota
	infoRuntime
	infoDriver
	infoCount
)

func (b *Backend) info(ctx context.Context, what uint64) (dec, error) {
	e := request(mInfo)
	e.u64(what)
	return b.callCtx(ctx, e)
}

func (b *Backend) infoInt(ctx context.Context, what uint64) (int, error) {
	d, err := b.info(ctx, what)
	if err != nil {
		return 0, err
	}
	return d.int(), nil
}

// requests recycles request buffers: Call copies a request into its frame, so the buffer is
// free again once Call returns.
var requests = sync.Pool{New: func() any { b := make([]byte, 0, 256); return &b }}

// request starts a request for method m.
func request(m method) enc {
	box := requests.Get().(*[]byte)
	e := enc{b: (*box)[:0], box: box}
	e.u64(uint64(m))
	return e
}

// call sends one request and waits for its answer. A backend.Device call takes no context,
// and neither does this: a call ends when the worker answers or dies (the worker package's
// heartbeats kill a frozen worker).
func (b *Backend) call(e enc) (dec, error) { return b.callCtx(context.Background(), e) }

// callCtx is call, abandoned when ctx ends.
func (b *Backend) callCtx(ctx context.Context, e enc) (dec, error) {
	sc, err := b.start(ctx, e)
	if err != nil {
		return dec{}, err
	}
	return sc.wait(ctx)
}

// startedCall is a call sent and not yet answered (start), whose answer wait collects.
type startedCall struct {
	b     *Backend
	e     enc // kept until the answer, for the slow-call log
	c     worker.Pending
	start time.Time
	who   string // what the slow-call log calls it
}

// start sends e as a call and returns without waiting for the answer.
func (b *Backend) start(ctx context.Context, e enc) (startedCall, error) {
	b.calls.Add(1)
	sc := startedCall{b: b, e: e, who: "parent: call"}
	if slowCalls > 0 {
		sc.start = time.Now()
	}
	c, err := b.proc.Start(ctx, e.b)
	if err != nil {
		e.recycle()
		return startedCall{}, b.gone(err)
	}
	sc.c = c
	return sc, nil
}

// wait collects a started call's answer, abandoning it when ctx ends.
func (sc *startedCall) wait(ctx context.Context) (dec, error) {
	resp, err := sc.c.Wait(ctx)
	if slowCalls > 0 {
		noteSlow(os.Stderr, sc.who, sc.e.b, sc.start)
	}
	sc.e.recycle()
	if err != nil {
		return dec{}, sc.b.gone(err)
	}
	return dec{b: resp}, nil
}

// recycle gives a request's buffer back once its frame is sent (the transport copied it).
// Only small buffers are kept: a module image may be megabytes.
func (e enc) recycle() {
	if e.box != nil && cap(e.b) <= 64<<10 {
		*e.box = e.b[:0]
		requests.Put(e.box)
	}
}

// gone is err as the device sees it: a *LostError when the worker died or was closed.
func (b *Backend) gone(err error) error {
	if errors.Is(err, worker.ErrWorkerDied) || errors.Is(err, worker.ErrClosed) {
		return b.lost(err)
	}
	return err
}

// lost is the error of a device whose worker is gone.
func (b *Backend) lost(err error) error {
	if err == nil {
		err = worker.ErrClosed
	}
	return &LostError{Err: err}
}

// LostError is the error of every call to a device whose worker died or was closed: it wraps
// the worker's error (matching worker.ErrWorkerDied, or worker.ErrClosed) and matches
// cudaerr.DevicesUnavailable too, which the device layer treats as the loss of the GPU.
type LostError struct{ Err error }

// Error says the isolated device is lost and why.
func (e *LostError) Error() string { return "isolated device lost: " + e.Err.Error() }

// Unwrap is the worker's error.
func (e *LostError) Unwrap() error { return e.Err }

// Is matches cudaerr.DevicesUnavailable.
func (e *LostError) Is(target error) bool { return target == cudaerr.DevicesUnavailable }
