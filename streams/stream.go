package streams

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// Stream is a CUDA stream of one device. Its methods are safe for concurrent use; operations
// sent from one goroutine run on the GPU in the order they were sent.
type Stream struct {
	dev       *device.Device
	h         backend.Stream
	blocking  bool
	priority  int
	destroyed atomic.Bool
	staging   atomic.Pointer[stager] // pinned buffers of CopyToDevice/CopyFromDevice (staging.go), made on first use
	copiers   int                    // StagingWorkers; 0: sized to the host
}

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

// New creates a stream on dev.
func New(ctx context.Context, dev *device.Device, opts ...Option) (*Stream, error) {
	if dev == nil {
		return nil, invalid("New on a nil device")
	}
	var c config
	for _, o := range opts {
		o(&c)
	}
	if c.setCopiers && (c.copiers < 1 || c.copiers > maxStagingWorkers) {
		return nil, invalid("StagingWorkers(%d): want 1 to %d", c.copiers, maxStagingWorkers)
	}
	return device.Exec(ctx, dev, func(rt backend.Device, tr *device.Tracker) (*Stream, error) {
		least, greatest, err := rt.StreamPriorityRange()
		if err != nil {
			return nil, err
		}
		if !c.hasPriority {
			c.priority = least
		}
		if c.priority > least || c.priority < greatest {
			return nil, invalid("stream priority %d outside the device's range [%d (highest), %d (lowest)]", c.priority, greatest, least)
		}
		flags := backend.StreamNonBlocking
		if c.blocking {
			flags = backend.StreamDefault
		}
		h, err := rt.StreamCreate(flags, c.priority)
		if err != nil {
			return nil, fmt.Errorf("gpuactor/streams: creating a stream: %w", err)
		}
		s := &Stream{dev: dev, h: h, blocking: c.blocking, priority: c.priority, copiers: c.copiers}
		tr.Own(s, func() error { return s.destroy(rt, tr) })
		return s, nil
	}).Await(ctx)
}

// PriorityRange is the device's stream priority range: least is the lowest priority (the
// default), greatest the highest, numerically lower.
func PriorityRange(ctx context.Context, dev *device.Device) (least, greatest int, err error) {
	type pair struct{ least, greatest int }
	p, err := device.Exec(ctx, dev, func(rt backend.Device, _ *device.Tracker) (pair, error) {
		l, g, err := rt.StreamPriorityRange()
		return pair{l, g}, err
	}).Await(ctx)
	return p.least, p.greatest, err
}

// Device is the device the stream belongs to.
func (s *Stream) Device() *device.Device { return s.dev }

// Priority is the stream's priority.
func (s *Stream) Priority() int { return s.priority }

// IsBlocking reports whether the stream synchronizes with the legacy default stream.
func (s *Stream) IsBlocking() bool { return s.blocking }

// Destroy waits for the work queued on the stream to finish, completes its futures, and
// destroys it. Destroying twice is an ErrDestroyed error.
func (s *Stream) Destroy(ctx context.Context) error {
	_, err := device.Exec(ctx, s.dev, func(rt backend.Device, tr *device.Tracker) (struct{}, error) {
		if s.destroyed.Load() {
			return struct{}{}, fmt.Errorf("%w: stream destroyed twice", ErrDestroyed)
		}
		tr.Disown(s)
		return struct{}{}, s.destroy(rt, tr)
	}).Await(ctx)
	return err
}

// destroy runs on the actor thread.
func (s *Stream) destroy(rt backend.Device, tr *device.Tracker) error {
	s.destroyed.Store(true)
	err := tr.Settle(s.h, nil)
	err = errors.Join(err, s.staging.Load().release(rt)) // the staging ring's pinned memory
	return errors.Join(err, rt.StreamDestroy(s.h))
}

// Synchronize waits until the GPU has finished everything queued on the stream so far. It
// does not hold up the device's other work while it waits.
func (s *Stream) Synchronize(ctx context.Context) error {
	_, err := s.enqueue(ctx, func(backend.Device, *device.Tracker, backend.Stream) error { return nil }).Await(ctx)
	return err
}

// Query reports whether the GPU has finished everything queued on the stream.
func (s *Stream) Query(ctx context.Context) (bool, error) {
	return device.Exec(ctx, s.dev, func(rt backend.Device, _ *device.Tracker) (bool, error) {
		if err := s.alive(); err != nil {
			return false, err
		}
		err := rt.StreamQuery(s.h)
		if errors.Is(err, cudaerr.NotReady) {
			return false, nil
		}
		return err == nil, err
	}).Await(ctx)
}

func (s *Stream) alive() error {
	if s.destroyed.Load() {
		return fmt.Errorf("%w: stream used after Destroy", ErrDestroyed)
	}
	return nil
}
