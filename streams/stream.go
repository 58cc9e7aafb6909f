package streams

import (
	"context"
	"errors"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
)

// Stream is a CUDA stream of one device. Its methods are safe for concurrent use; operations
// sent from one goroutine run on the GPU in the order they were sent.
type Stream core.Stream

func (s *Stream) core() *core.Stream { return (*core.Stream)(s) }

// Option configures New.
type Option func(*config)

type config struct {
	blocking    bool
	priority    int
	hasPriority bool
	copiers     int // 0: not set
	setCopiers  bool
}

// Blocking makes a stream that synchronizes with the legacy default stream (cudaStreamDefault)
// instead of the default non-blocking one.
func Blocking() Option { return func(c *config) { c.blocking = true } }

// Priority sets the stream's priority: lower numbers run first. It must lie within the
// device's PriorityRange.
func Priority(p int) Option { return func(c *config) { c.priority, c.hasPriority = p, true } }

// StagingWorkers sets how many goroutines copy host memory for the stream's staged copies of
// Go slices (CopyToDevice, CopyFromDevice), from 1 to 64. By default the stream measures the
// host's memmove rate and takes enough of them to keep a PCIe gen5 link busy, at most
// GOMAXPROCS−2; a service that would rather spend fewer cores on copies sets fewer.
func StagingWorkers(n int) Option { return func(c *config) { c.copiers, c.setCopiers = n, true } }

// New creates a stream on dev; it returns once the stream exists. Close it with Close, or let
// the device's Close destroy it.
func New(ctx context.Context, dev *device.Device, opts ...Option) (*Stream, error) {
	if dev == nil {
		return nil, core.Invalid("New on a nil device")
	}
	var c config
	for _, o := range opts {
		o(&c)
	}
	if c.setCopiers && (c.copiers < 1 || c.copiers > maxStagingWorkers) {
		return nil, core.Invalid("StagingWorkers(%d): want 1 to %d", c.copiers, maxStagingWorkers)
	}
	cs, err := core.NewStream(ctx, (*core.Device)(dev), core.StreamConfig{Blocking: c.blocking, Priority: c.priority, HasPriority: c.hasPriority})
	if err != nil {
		return nil, err
	}
	s := (*Stream)(cs)
	if c.setCopiers {
		s.stager(func() stagingParams { return stagingParamsFor(c.copiers) })
	}
	return s, nil
}

// Default is dev's own stream: a non-blocking stream the device made when it opened, which
// any goroutine may use, and which the device destroys when it closes (its Close is an
// error). It is not CUDA's legacy default stream, on which gpuactor never queues work. A
// buffer's and a module's Close wait for the work queued on it.
func Default(dev *device.Device) *Stream {
	if dev == nil {
		return nil
	}
	return (*Stream)((*core.Device)(dev).Stream())
}

// PriorityRange is the device's stream priority range: least is the lowest priority (the
// default), greatest the highest, numerically lower.
func PriorityRange(ctx context.Context, dev *device.Device) (least, greatest int, err error) {
	if dev == nil {
		return 0, 0, core.Invalid("PriorityRange of a nil device")
	}
	type pair struct{ least, greatest int }
	p, err := core.Run(ctx, (*core.Device)(dev), func(rt backend.Device, _ *core.Tracker) (pair, error) {
		l, g, err := rt.StreamPriorityRange()
		return pair{l, g}, err
	}).Await(ctx)
	return p.least, p.greatest, err
}

// Device is the device the stream belongs to.
func (s *Stream) Device() *device.Device { return (*device.Device)(s.core().Device()) }

// InFlight is how many operations were sent to the stream and have not completed: queued for
// the actor or on the GPU. It does not wait; device.Device.Stats has the device's total.
func (s *Stream) InFlight() int64 { return s.core().InFlight() }

// Priority is the stream's priority: the one it was made with, or the one SetPriority or
// CopyAttributesFrom gave it since.
func (s *Stream) Priority() int { return s.core().Priority() }

// IsBlocking reports whether the stream synchronizes with the legacy default stream.
func (s *Stream) IsBlocking() bool { return s.core().Blocking() }

// Close waits for the work queued on the stream to finish, completes its futures, destroys
// the stream and frees its staging memory; it returns once all of that is done. Closing twice
// is an ErrClosed error; the device's own stream (Default) is closed by the device's Close
// only.
func (s *Stream) Close(ctx context.Context) error { return s.core().Close(ctx) }

// Synchronize waits until the GPU has finished everything queued on the stream so far. It
// does not hold up the device's other work while it waits. On a capturing stream nothing
// runs to wait for: as cudaStreamSynchronize does, it fails and invalidates the capture.
func (s *Stream) Synchronize(ctx context.Context) error {
	if s == nil {
		return core.Invalid("Synchronize of a nil stream")
	}
	if err := s.core().Device().InHostFunc("Stream.Synchronize"); err != nil {
		return err
	}
	return core.Queue(ctx, s.core(), func(rt backend.Device, tr *core.Tracker, h backend.Stream) error {
		if tr.Capturing(h) {
			return rt.StreamSynchronize(h) // refused at once: the runtime's error, the capture invalidated
		}
		return nil
	}).Wait(ctx)
}

// Query reports whether the GPU has finished everything queued on the stream; it returns once
// the device's actor has asked the runtime.
func (s *Stream) Query(ctx context.Context) (bool, error) {
	if s == nil {
		return false, core.Invalid("Query of a nil stream")
	}
	return core.RunOn(ctx, s.core(), func(rt backend.Device, _ *core.Tracker, h backend.Stream) (bool, error) {
		err := rt.StreamQuery(h)
		if errors.Is(err, cudaerr.NotReady) {
			return false, nil
		}
		return err == nil, err
	}).Await(ctx)
}
