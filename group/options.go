package group

import (
	"context"
	"log/slog"
	"strconv"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/supervise"
)

// Policy decides which device a job is placed on.
type Policy int

const (
	// LeastOutstanding places a job on the device with the fewest jobs queued and running:
	// a faster device drains sooner and so gets more of the work.
	LeastOutstanding Policy = iota
	// RoundRobin places jobs on the healthy devices in turn.
	RoundRobin
	// Affinity places jobs of one Key on one device while it stays healthy (another when it
	// fails); jobs without a key are placed as LeastOutstanding places them.
	Affinity
	// Memory places a job that declares Bytes on the device with the most memory left
	// for jobs, and makes it wait there until its bytes fit; others as LeastOutstanding.
	Memory
)

// Option configures New.
type Option func(*config)

type config struct {
	streams  int
	queue    int
	failFast bool
	policy   Policy
	memory   map[int]uint64 // ordinal → bytes jobs may declare at once (WithMemory)

	// WithRestart: whether it was given (with a nil open, New refuses it), the function that
	// reopens a failed device, and the restart policy.
	restart  bool
	open     func(ctx context.Context, failed *device.Device) (*device.Device, error)
	restarts []supervise.Option

	log *slog.Logger // WithLogger; never nil once New has it

	setup func(ctx context.Context, d *device.Device) error // WithSetup; nil without it
}

// WithStreams sets how many streams, and so jobs running at once, each device gets
// (default 4).
func WithStreams(n int) Option { return func(c *config) { c.streams = n } }

// WithQueue bounds how many jobs may wait to run, over all devices (default 1024).
func WithQueue(n int) Option { return func(c *config) { c.queue = n } }

// WithFailFast makes Submit fail at once with ErrQueueFull when the queue is full, instead of
// waiting for room.
func WithFailFast() Option { return func(c *config) { c.failFast = true } }

// WithPolicy sets how jobs are placed (default LeastOutstanding).
func WithPolicy(p Policy) Option { return func(c *config) { c.policy = p } }

// WithMemory sets how many bytes the jobs on device ordinal may declare (Bytes) at once,
// instead of the device's free memory when the group is made (less its WithMemoryLimit
// headroom, when it has one).
func WithMemory(ordinal int, bytes uint64) Option {
	return func(c *config) {
		if c.memory == nil {
			c.memory = map[int]uint64{}
		}
		c.memory[ordinal] = bytes
	}
}

// JobOption describes a job to the group.
type JobOption func(*jobConfig)

type jobConfig struct {
	key        string
	bytes      int64
	idempotent bool
}

// Key is the job's affinity key (the Affinity policy).
func Key(k string) JobOption { return func(c *jobConfig) { c.key = k } }

// Bytes declares the device memory the job needs while it runs (the Memory policy; under
// any policy, a job needing more than every device has fails at once with ErrTooBig).
func Bytes(n uint64) JobOption { return func(c *jobConfig) { c.bytes = int64(min(n, 1<<62)) } }

// Idempotent marks a job safe to run again: if its device fails under it, it runs again on
// another device instead of failing.
func Idempotent() JobOption { return func(c *jobConfig) { c.idempotent = true } }

// String names the policy as its constant does.
func (p Policy) String() string {
	switch p {
	case LeastOutstanding:
		return "LeastOutstanding"
	case RoundRobin:
		return "RoundRobin"
	case Affinity:
		return "Affinity"
	case Memory:
		return "Memory"
	}
	return "Policy(" + strconv.Itoa(int(p)) + ")"
}

// WithLogger logs what the group does about failures to l: a device taken out of placement
// (warn), a job moved or run again on another device after its device failed (info, debug
// for a queued job moved), and, with WithRestart, the supervisor's lines (a failure, each
// restart, giving up) and each device reopened (info). Each line names the device. The
// default, and a nil l, log nowhere. A supervise.WithLogger given to WithRestart takes the
// restarts' lines elsewhere.
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.log = l } }

// WithSetup runs setup on every device the group opens or reopens, before the device takes
// any job: in New, on each device given (at once, on goroutines of their own), and with
// WithRestart, on each device that replaces a failed one, before it is placed. It is where a
// job's per-device state is made: load a device.Program's kernels (Kernel), make pools or
// constant buffers. setup is given New's context in New, and in a restart the supervisor's,
// which Close ends. An error from setup in New fails New, which closes the streams it made
// (the devices stay the caller's); in a restart it counts as a failed restart, as an error
// from open does (the supervise policy decides what comes next), and the new device is
// closed. A panic in setup is such an error. Unlike supervise.OnRestart, which tells only a
// generation number once the device is back, setup is given the device, and the device waits
// for it.
func WithSetup(setup func(ctx context.Context, d *device.Device) error) Option {
	return func(c *config) { c.setup = setup }
}
