package core

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/nvtx"
)

// Device is one GPU behind its actor: the state device.Device is a face over.
type Device struct {
	ordinal int
	be      backend.Backend
	act     *actor.Actor
	log     *zap.Logger
	info    atomic.Pointer[any] // the public package's description of the device (Config.Describe)
	limits  Limits              // what launches are checked against
	health  *backend.Health     // the GPU's failure, shared by every Device opened on it
	// aborting: a Shutdown's deadline passed; the actor fails what is left (abortLeft).
	aborting atomic.Bool
	watchdog time.Duration
	stuck    atomic.Bool // the watchdog fired: release abandons instead of freeing
	onStuck  func()      // Config.OnStuck
	acct     accounting
	staging  *Staging
	ops      opStats
	// hostCalls are the goroutines running host functions now (InHostFunc).
	hostCalls hostCalls

	pinned atomic.Pointer[PinnedPool] // PinnedPool's, made on first use

	extMu sync.Mutex
	ext   map[any]any // public packages' per-device state (Ext)

	// Actor thread only.
	rt          backend.Device
	starter     backend.AllocStarter // rt, when it can start allocations (startalloc.go)
	started     []startedAlloc       // allocations started and not yet collected
	stream      *Stream              // the device's own stream
	healthS     backend.Stream       // Health's stream, made on first use
	tracker     *Tracker
	trackCounts trackerCounts // the tracker's counters, read from any goroutine
	// anyq is the backend's any-thread event query when the device's waiters probe their
	// watermarks (Config.WaiterQuery); set before the first operation, then read-only.
	anyq     backend.AnyThreadEventQuerier
	live     liveSet
	syncEv   backend.Event // Synchronize's; 0 until first used
	aborted  bool          // abortLeft has run
	closeErr error

	pools map[backend.MemPool]*Pool // the pools Pool values stand for, one each (pool.go); actor thread only
}

// liveSet is what the device releases on Close. Actor thread only.
type liveSet struct {
	buffers bufList
	hosts   map[*HostBuffer]struct{}
	modules map[*Module]struct{}
}

// Limits are the device's launch limits, which PrepareLaunch checks a launch's shape against.
type Limits struct {
	MaxBlock, MaxGrid  cuda.Dim3
	MaxThreadsPerBlock int
	MaxSharedMem       int // dynamic shared memory per block, in bytes
	launchLimits           // read by core itself (launchlimits.go)
}

// The pprof labels a device's actor goroutine runs under: its ordinal and its backend.
const (
	LabelDevice  = "gpuactor.device"
	LabelBackend = "gpuactor.backend"
)

// Config is how Open sets a device up.
type Config struct {
	Logger       *zap.Logger // nil: discard
	MemLimit     uint64      // Charge's cap on device memory; 0: none
	StagingLimit uint64      // the staging pool's cap in bytes; 0: DefaultStagingLimit
	// Tuning are the actor's tuning options (mailbox, batch, spin windows), applied before
	// the device's own (name, hooks, thread lock), so that none of those can be replaced.
	Tuning []actor.Option
	// Unlocked leaves the actor's goroutine free to move between OS threads: an isolated
	// device's calls go to its worker, not to the runtime, and a locked thread would cost a
	// thread hand-off on each of the worker's answers.
	Unlocked bool
	// Describe runs on the actor thread once the device's context is current, and returns the
	// public package's description of the device (Info) and its launch limits. Without it,
	// the device has no Info and reads its limits itself.
	Describe func(be backend.Backend, rt backend.Device) (info any, lim Limits, err error)
	// Watchdog: the device fails as stuck (ErrStuck) once the GPU has passed none of its
	// operations in flight for this long; 0: never.
	Watchdog time.Duration
	// Closer is what the device owns besides its backend device (an isolated device's
	// worker): closed on the actor thread once the device has released everything.
	Closer io.Closer
	// OnStuck runs (on the actor thread; it must not block) once the watchdog failed the
	// device as stuck: an isolated device ends its worker there, which frees the GPU.
	OnStuck func()
	// OpenFlags, when set, are the context flags (backend.Device* flags) the device is opened
	// with, before its primary context is made; the backend must be a backend.FlagOpener.
	OpenFlags *uint32
	// WaiterQuery lets callers spinning in Await on a stream operation's future ask its
	// watermark event themselves, from their own threads, when the backend's event query is
	// safe from any thread (backend.AnyThreadEventQuerier; docs/design/waiter-completion.md).
	WaiterQuery bool
}

// Open starts the actor of device ordinal of be and returns once the device's context, its
// own stream and its tracker are ready.
func Open(ctx context.Context, be backend.Backend, cfg Config, ordinal int) (*Device, error) {
	if be == nil {
		return nil, Invalid("no backend to open device %d on", ordinal)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	n, err := be.DeviceCount()
	if err != nil {
		return nil, fmt.Errorf("gpuactor: counting devices: %w", err)
	}
	if ordinal < 0 || ordinal >= n {
		return nil, Invalid("device ordinal %d out of range: the %s backend has %d device(s)", ordinal, be.Name(), n)
	}
	if err := be.Health(ordinal).Err(); err != nil { // failed in this process: for good
		return nil, fmt.Errorf("gpuactor: opening device %d: %w", ordinal, err)
	}
	log := cfg.Logger
	if log == nil {
		log = zap.NewNop()
	}
	d := &Device{
		ordinal:  ordinal,
		be:       be,
		health:   be.Health(ordinal),
		watchdog: cfg.Watchdog,
		onStuck:  cfg.OnStuck,
		log:      log.With(zap.Int("device", ordinal), zap.String("backend", be.Name())),
		acct:     accounting{limit: cfg.MemLimit},
		live: liveSet{
			hosts:   map[*HostBuffer]struct{}{},
			modules: map[*Module]struct{}{},
		},
	}
	d.ops.epoch = time.Now()
	d.staging = newStaging(d, cfg.StagingLimit)
	opts := append(slices.Clip(cfg.Tuning), // the device's own last: nothing replaces them
		actor.WithName(fmt.Sprintf("gpuactor/%s/%d", be.Name(), ordinal)),
		actor.WithLabels(LabelDevice, strconv.Itoa(ordinal), LabelBackend, be.Name()),
		actor.WithClosedError(&closedError{base: Closed("device %d (%s)", ordinal, be.Name()), health: be.Health(ordinal)}),
		actor.WithInit(func() error { return d.init(cfg.Describe, cfg.OpenFlags, cfg.WaiterQuery) }),
		actor.WithShutdown(func() {
			d.release()
			if cfg.Closer != nil {
				if err := cfg.Closer.Close(); err != nil {
					d.log.Warn("closing what the device owns", zap.Error(err))
				}
			}
			if d.Err() != nil {
				// A failed device's Close reports nothing of its own: the failure is Err's,
				// and an isolated device's worker found dead while closing (its release
				// failing on the way) is known by now, whichever came first.
				d.closeErr = nil
			}
		}),
		actor.WithGuard(d.guard),
		actor.WithErrorMap(d.note),
		actor.WithIdle(d.poll),
		actor.WithLockedThread(!cfg.Unlocked),
	)
	act, err := actor.New(opts...)
	if err != nil {
		return nil, fmt.Errorf("gpuactor: opening device %d: %w", ordinal, err)
	}
	d.act = act
	if err := ctx.Err(); err != nil {
		_ = d.Close()
		return nil, err
	}
	d.log.Debug("device open")
	return d, nil
}

// init runs on the actor's locked thread before any op.
func (d *Device) init(describe func(backend.Backend, backend.Device) (any, Limits, error), flags *uint32, waiterQuery bool) error {
	rt, err := d.openBackend(flags)
	if err != nil {
		return err
	}
	d.rt = rt
	d.starter, _ = rt.(backend.AllocStarter)
	nvtx.NameCurrentThread(fmt.Sprintf("gpuactor device %d", d.ordinal))
	if describe == nil {
		describe = readLimits
	}
	info, limits, err := describe(d.be, rt)
	if err != nil {
		return err
	}
	if err := readLaunchLimits(rt, &limits); err != nil {
		return err
	}
	d.limits = limits
	if info != nil {
		d.info.Store(&info)
	}
	h, err := rt.StreamCreate(backend.StreamNonBlocking, 0)
	if err != nil {
		return fmt.Errorf("gpuactor: creating the device's stream: %w", err)
	}
	d.stream = &Stream{dev: d, h: h, own: true}
	d.tracker = newTracker(rt, d.noteAfter, &d.trackCounts)
	if q, ok := rt.(backend.AnyThreadEventQuerier); ok && waiterQuery {
		d.anyq = q
		d.tracker.probe = true
	}
	return nil
}

// poll is the actor's idle hook: it runs completions the GPU has reached.
func (d *Device) poll(waiting bool, now time.Duration) bool {
	if d.tracker == nil {
		return false
	}
	if len(d.started) > 0 {
		d.settleAllocs()
	}
	d.abortLeft()
	busy := d.tracker.poll(waiting, now)
	if busy {
		d.watch(now)
	}
	// A stuck device waits for nothing: what is in flight will not finish, and Close must not
	// wait for it.
	return busy && !d.stuck.Load()
}

// guard refuses every message once the device failed, or once a Shutdown's deadline passed.
func (d *Device) guard() error {
	if d.aborting.Load() {
		return d.shutdownErr()
	}
	return d.Err()
}

// release runs on the actor thread after the last op: it frees what callers left behind.
func (d *Device) release() {
	if d.rt == nil || d.tracker == nil {
		return
	}
	d.settleAllocs()
	d.abortLeft()
	if d.stuck.Load() {
		d.abandon()
		return
	}
	var errs []error
	errs = append(errs, d.tracker.close()) // public packages' streams and resources first
	if d.healthS != 0 {
		errs = append(errs, d.rt.StreamDestroy(d.healthS))
	}
	if d.Err() == nil {
		errs = append(errs, d.rt.StreamSynchronize(d.stream.h))
	}
	errs = append(errs, d.staging.release(d.rt)) // no stream uses a slot now
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
	if d.syncEv != 0 {
		errs = append(errs, d.rt.EventDestroy(d.syncEv))
	}
	errs = append(errs, d.stream.destroy(d.rt, d.tracker))
	if d.Err() == nil {
		d.closeErr = errors.Join(errs...)
	}
}

// Close finishes the work already sent, frees every buffer, host buffer and module still
// live, and stops the actor. Later calls fail with ErrClosed. It returns what went wrong
// releasing a healthy device's resources, and nil for a device that failed, before or while
// closing (Err says how). Idempotent.
func (d *Device) Close() error {
	if d == nil {
		return errNilDevice
	}
	if err := d.InHostFunc("Close"); err != nil {
		return err
	}
	if err := d.act.Close(); err != nil { // idempotent: later calls wait for nothing
		return err
	}
	return d.closeErr // written by release on the actor, before Close returns
}

// Ordinal is the device's index in its backend.
func (d *Device) Ordinal() int {
	if d == nil {
		return -1
	}
	return d.ordinal
}

// BackendName is the backend's name: "cuda" or "sim".
func (d *Device) BackendName() string {
	if d == nil {
		return ""
	}
	return d.be.Name()
}

// Info is what Config.Describe returned when the device opened, or what InfoOr made since;
// nil for neither.
func (d *Device) Info() any {
	if d == nil {
		return nil
	}
	if p := d.info.Load(); p != nil {
		return *p
	}
	return nil
}

// InfoOr is Info, made by mk for a device opened without a description (once: a racing
// maker's value is dropped).
func (d *Device) InfoOr(mk func() any) any {
	if p := d.info.Load(); p != nil {
		return *p
	}
	v := mk()
	d.info.CompareAndSwap(nil, &v)
	return *d.info.Load()
}

// Backend is the backend the device runs on.
func (d *Device) Backend() backend.Backend { return d.be }

// Limits are the device's launch limits.
func (d *Device) Limits() Limits { return d.limits }

// Log is the device's logger.
func (d *Device) Log() *zap.Logger { return d.log }

// Stream is the device's own stream, made when it opened and destroyed when it closes.
func (d *Device) Stream() *Stream { return d.stream }

// Err is the sticky error that failed the device, or nil while it is healthy. A failure met
// through another Device opened on the same GPU fails this one too.
func (d *Device) Err() error {
	if d == nil {
		return errNilDevice
	}
	return d.health.Err()
}

// note records a sticky error, or the loss of the GPU: the device is unusable from then on. It returns the error to
// hand on: for a sticky error the device's failure, which wraps ErrDeviceFailed and the first
// sticky error, so that every operation the failure ends reports the one failure.
func (d *Device) note(err error) error { return d.noteAfter(err, "") }

// noteAfter is note for an error a stream reported after the launch culprit names ("" when
// unknown): the runtime reports a kernel's fault at a later call, so the failure names that
// launch, or else the call that saw the fault — which need not have caused it.
func (d *Device) noteAfter(err error, culprit string) error {
	if err == nil || !(cudaerr.IsSticky(err) || errors.Is(err, cudaerr.DevicesUnavailable)) { // unavailable: the GPU is lost
		return err
	}
	if d.health.Fail(d.failure(err, culprit)) {
		d.log.Error("device failed with a sticky error", zap.Error(err))
	}
	return d.Err()
}

// failure is the device's failure for sticky error err, matching ErrDeviceFailed and err.
func (d *Device) failure(err error, culprit string) error {
	if errors.Is(err, ErrDeviceFailed) { // already a device's failure: one met through another Device
		return err
	}
	if culprit != "" {
		return fmt.Errorf("%w: device %d: sticky fault after the %s, seen at its stream's next check: %w", ErrDeviceFailed, d.ordinal, culprit, err)
	}
	if ce, ok := errors.AsType[*cudaerr.Error](err); ok && ce.Op != "" {
		return fmt.Errorf("%w: device %d: sticky fault seen at %s (the call that met it, which need not have caused it): %w", ErrDeviceFailed, d.ordinal, ce.Op, err)
	}
	return fmt.Errorf("%w: %w", ErrDeviceFailed, err)
}

// Ext is per-device state of a public package, made by mk on first use under key and kept
// until the device closes. Safe from any goroutine; the value's own synchronization is its
// owner's.
func (d *Device) Ext(key any, mk func() any) any {
	d.extMu.Lock()
	defer d.extMu.Unlock()
	if d.ext == nil {
		d.ext = map[any]any{}
	}
	v, ok := d.ext[key]
	if !ok {
		v = mk()
		d.ext[key] = v
	}
	return v
}

// MemInfo is the device's free and total memory in bytes, now.
func (d *Device) MemInfo(ctx context.Context) (free, total uint64, err error) {
	type pair struct{ free, total uint64 }
	p, err := Run(ctx, d, func(rt backend.Device, _ *Tracker) (pair, error) {
		f, t, err := rt.MemInfo()
		return pair{f, t}, err
	}).Await(ctx)
	return p.free, p.total, err
}

// Synchronize waits until the GPU has passed all work sent to the device's streams so far,
// without holding up the device's other work while it waits. Like cudaDeviceSynchronize, it
// lets the stream-ordered pools give back memory freed above their release thresholds.
func (d *Device) Synchronize(ctx context.Context) error {
	if err := d.InHostFunc("Synchronize"); err != nil {
		return err
	}
	return RunTracked(ctx, d, func(rt backend.Device, tr *Tracker, done func(error)) error {
		ev, err := d.syncEvent(rt)
		if err != nil {
			return err
		}
		if err := rt.EventRecord(ev, d.stream.h); err != nil {
			return err
		}
		tr.AfterAll(func(err error) {
			if err != nil { // the device failed: ev may never complete (a stuck device's)
				done(err)
				return
			}
			// The pools give freed memory back at a synchronization that observes the free
			// (poolrelease.go): ev is complete by now (the device's own stream, where
			// Close frees without a stream, has passed it), so this returns at once, as does
			// synchronizing the idle streams that freed.
			done(errors.Join(rt.EventSynchronize(ev), tr.releaseFreed()))
		})
		return nil
	}).Wait(ctx)
}

// syncEvent is the event Synchronize records, made on first use. Actor thread only.
func (d *Device) syncEvent(rt backend.Device) (backend.Event, error) {
	if d.syncEv == 0 {
		ev, err := rt.EventCreate(backend.EventDisableTiming)
		if err != nil {
			return 0, err
		}
		d.syncEv = ev
	}
	return d.syncEv, nil
}

// TrackerStats reads the completion tracker's counters without waiting for the actor.
func (d *Device) TrackerStats() TrackerStats { return d.trackCounts.snapshot() }

// ActorStats is the device actor's counters.
func (d *Device) ActorStats() actor.Stats { return d.act.Stats() }

// readLimits is the description of a device opened without one: its launch limits alone.
func readLimits(_ backend.Backend, rt backend.Device) (any, Limits, error) {
	var l Limits
	var block, grid [3]int
	var shared, optin int
	for _, a := range []struct {
		attr backend.Attr
		dst  *int
	}{
		{backend.AttrMaxBlockDimX, &block[0]}, {backend.AttrMaxBlockDimY, &block[1]}, {backend.AttrMaxBlockDimZ, &block[2]},
		{backend.AttrMaxGridDimX, &grid[0]}, {backend.AttrMaxGridDimY, &grid[1]}, {backend.AttrMaxGridDimZ, &grid[2]},
		{backend.AttrMaxThreadsPerBlock, &l.MaxThreadsPerBlock},
		{backend.AttrMaxSharedMemoryPerBlock, &shared}, {backend.AttrMaxSharedMemoryPerBlockOptin, &optin},
	} {
		v, err := rt.Attribute(a.attr)
		if err != nil {
			return nil, l, fmt.Errorf("gpuactor: reading device attribute %d: %w", a.attr, err)
		}
		*a.dst = v
	}
	l.MaxBlock = cuda.Dim3{X: uint32(block[0]), Y: uint32(block[1]), Z: uint32(block[2])}
	l.MaxGrid = cuda.Dim3{X: uint32(grid[0]), Y: uint32(grid[1]), Z: uint32(grid[2])}
	l.MaxSharedMem = max(shared, optin)
	return nil, l, nil
}
