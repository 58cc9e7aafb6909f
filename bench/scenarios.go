package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/streams"
)

// Result is one measured figure of one implementation; the C++ baseline and the Python peers
// print the same fields as JSON lines.
type Result struct {
	Impl     string   `json:"impl"`              // gpuactor, cpp, cupy, cuda.core
	Backend  string   `json:"backend,omitempty"` // gpuactor's backend: cuda or sim
	Scenario string   `json:"scenario"`
	Size     int64    `json:"size,omitempty"`
	Unit     string   `json:"unit"`
	Value    float64  `json:"value"`
	P99      *float64 `json:"p99,omitempty"`
	Repeats  int      `json:"repeats"`
	Checked  bool     `json:"checked"`
	// Pass numbers the C++ baseline's runs: it runs before and after gpuactor (before and
	// after each round, with -rounds), so that the drift of a shared GPU host over the run
	// shows as the spread between them.
	Pass int `json:"pass,omitempty"`
	// Round numbers gpuactor's runs of its rows with -rounds > 1: round r ran between C++
	// passes r and r+1. 0 when the rows ran once.
	Round int `json:"round,omitempty"`
	// Devices: how many devices a row that fans jobs out over several ran on; 0 for the rest.
	Devices int `json:"devices,omitempty"`

	rounds int // how many rounds collapseRounds folded into this result
}

// env is what a scenario runs against.
type env struct {
	ctx     context.Context
	dev     *device.Device
	empty   *device.Kernel
	binding func() (*direct, error) // the runtime straight through the binding, on a locked thread
	copiers int                     // -staging-workers
	graphs  *streams.Stream         // the graph rows' one stream (graphStream)

	devOpts    []device.Option // how dev was opened: the group rows open the others the same way
	othersOnce sync.Once
	others     []*device.Device // every device but dev, for the group rows (groupDevices)
	othersErr  error
	busyMu     sync.Mutex
	busy       map[int]busyJob // the group rows' kernel, per device ordinal

	isoOnce sync.Once
	iso     *env // the isolated rows' env: dev opened again, isolated (isolatedEnv)
	isoErr  error
}

// close closes the env's devices: the others the group rows opened, then its own.
func (e *env) close() {
	for _, d := range e.others {
		d.Close()
	}
	e.dev.Close()
}

// scenario is one row kind of the suite.
type scenario struct {
	name  string
	unit  string
	sized bool   // runs once per -sizes entry
	size  int64  // fixed size, for unsized rows that still move bytes
	nodes bool   // size is a graph's node count: runs only where -graph-sizes has it
	ref   string // the C++ scenario it is compared with, when not its own name
	// byHand is a second C++ scenario shown beside it, in a table of its own: C++ doing the
	// same work by hand (staging pageable memory through pinned slots), where ref is the target
	// the row is held to (pinned memory). It runs in the same passes as ref.
	byHand string
	// pageable is a third C++ scenario shown beside it, in a table of its own: the runtime's
	// own copy of the same bytes from pageable memory, which a staged copy must beat.
	pageable string
	// probes are more C++ scenarios shown beside it, in a table of their own
	// (probes_report.go): other ways C++ could do the row's work, each over ref in the same
	// pass. They run in the same passes as ref.
	probes []string
	// manyStreams: the row has work in flight on several streams at once (see scenarios).
	manyStreams bool
	// optIn: the row runs only when -scenarios names it, not in the default suite.
	optIn bool
	// fanout: how many devices the row runs on, for rows that fan jobs out over several
	// (fanoutAll: every device); 0 for the rest, which run on one.
	fanout int
	run    func(e *env, size int64, repeat int) (value float64, p99 *float64, err error)
}

func (s scenario) refName() string {
	if s.ref != "" {
		return s.ref
	}
	return s.name
}

// cppRows is every C++ scenario the row is shown against: refName, then byHand,
// pageable and the probes.
func (s scenario) cppRows() []string {
	rows := []string{s.refName()}
	for _, r := range []string{s.byHand, s.pageable} {
		if r != "" {
			rows = append(rows, r)
		}
	}
	return append(rows, s.probes...)
}

var one = cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(1)}

const launchesPerRepeat = 20000

// scenarios is every row, in the order they run. Graphs run a third slower per node once a
// process has used more than two streams, and stay so, in C++ too (bench/results/FINDINGS.md);
// the C++ baseline runs everything on one stream. So the graph rows run first, on one stream of their own (graphStream), and the
// rows that drive several streams at once run last. The binding rows (binding_rows.go) follow
// the graph rows: each opens a stream of its own, which the graph rows must not see first.
func scenarios() []scenario {
	all := slices.Concat(graphScenarios(), bindingScenarios(), coreScenarios(), streamScenarios(), allocScenarios(), freeScenarios(), submitterScenarios(), pitchedScenarios(), isolatedScenarios(), groupScenarios(), peerScenarios())
	slices.SortStableFunc(all, func(a, b scenario) int {
		return cmp.Compare(b2i(a.manyStreams), b2i(b.manyStreams))
	})
	return all
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func coreScenarios() []scenario {
	return []scenario{
		{name: "launch_enqueue", unit: "us/launch", run: func(e *env, _ int64, r int) (float64, *float64, error) {
			return launchRate(e, 1, r)
		}},
		{name: "launch_pipelined_8", unit: "us/launch", ref: "launch_enqueue", run: func(e *env, _ int64, r int) (float64, *float64, error) {
			return launchRate(e, 8, r)
		}},
		{name: "launch_pipelined_64", unit: "us/launch", ref: "launch_enqueue", run: func(e *env, _ int64, r int) (float64, *float64, error) {
			return launchRate(e, 64, r)
		}},
		// The probes are C++ noticing the launch's completion the ways gpuactor could:
		// docs/design/roundtrip.md, bench/cbaseline/detect.h.
		{name: "launch_roundtrip", unit: "us", probes: []string{"roundtrip_query_loop", "roundtrip_event_sync", "roundtrip_event_sync_other"}, run: launchRoundTrip},
		{name: "h2d_async_64B", unit: "us/copy", size: 64, run: smallAsyncCopies},
		{name: "h2d_pinned", unit: "GB/s", sized: true, run: pinnedBandwidth(true)},
		{name: "d2h_pinned", unit: "GB/s", sized: true, run: pinnedBandwidth(false)},
		{name: "h2d_staged", unit: "GB/s", sized: true, ref: "h2d_pinned", byHand: "h2d_staged", pageable: "h2d_pageable", run: traced("h2d_staged", stagedBandwidth(true))},
		{name: "d2h_staged", unit: "GB/s", sized: true, ref: "d2h_pinned", byHand: "d2h_staged", pageable: "d2h_pageable", run: traced("d2h_staged", stagedBandwidth(false))},
		{name: "d2d", unit: "GB/s", size: 1 << 30, run: deviceBandwidth},
		{name: "malloc_free", unit: "us/pair", size: 1 << 20, run: mallocFree},
		{name: "stream_query", unit: "ns/call", run: bindingCall(func(d backend.Device, s backend.Stream, _ backend.Event) error { return d.StreamQuery(s) })},
		{name: "event_record", unit: "ns/call", run: bindingCall(func(d backend.Device, s backend.Stream, ev backend.Event) error { return d.EventRecord(ev, s) })},
	}
}

// fanOut runs work(0) … work(g-1) on goroutines of their own and returns the first error once
// all have returned.
func fanOut(g int, work func(i int) error) error {
	var eg errgroup.Group
	for i := range g {
		eg.Go(func() error { return work(i) })
	}
	return eg.Wait()
}

// launchRate: g goroutines each keep up to 64 empty launches in flight on the device's own
// stream; one Synchronize ends each repeat. Per-launch time is batch time / launches.
func launchRate(e *env, g, repeat int) (float64, *float64, error) {
	per := launchesPerRepeat / g
	var samples []float64
	for r := -1; r < repeat; r++ { // r == -1 is the warm-up
		start := time.Now()
		if err := fanOut(g, func(int) error {
			return inFlight(e, per, func() *actor.Future[struct{}] { return streams.Default(e.dev).Launch(e.ctx, e.empty, one) })
		}); err != nil {
			return 0, nil, err
		}
		if err := e.dev.Synchronize(e.ctx); err != nil {
			return 0, nil, err
		}
		if r >= 0 {
			samples = append(samples, float64(time.Since(start).Nanoseconds())/1e3/float64(per*g))
		}
	}
	return median(samples), nil, nil
}

// launchRoundTrip times each launch on the device's own stream, waited for until the kernel
// has run, on its own.
func launchRoundTrip(e *env, _ int64, repeat int) (float64, *float64, error) {
	return roundTrips(e, repeat, streams.Default(e.dev))
}

// roundTrips times each launch on s, waited for until the kernel has run, on its own: the
// median and p99 over every launch of every repeat.
func roundTrips(e *env, repeat int, s *streams.Stream) (float64, *float64, error) {
	const iters = 2000
	var all []float64
	for r := -1; r < repeat; r++ {
		for range iters {
			start := time.Now()
			if err := s.Launch(e.ctx, e.empty, one).Wait(e.ctx); err != nil {
				return 0, nil, err
			}
			if r >= 0 {
				all = append(all, float64(time.Since(start).Nanoseconds())/1e3)
			}
		}
	}
	p99 := percentile(all, 99)
	return median(all), &p99, nil
}

// smallAsyncCopies queues 64-byte pinned-to-device copies, 64 in flight, and checks that the
// device holds the last one.
func smallAsyncCopies(e *env, size int64, repeat int) (float64, *float64, error) {
	return smallCopies(e, size, repeat, func(buf *device.Buffer, host *device.HostBuffer) *actor.Future[struct{}] {
		return streams.Default(e.dev).CopyHostToDevice(e.ctx, buf, host)
	})
}

// smallCopies times batches of small pinned-to-device copies issued by copyOnce, 64 in flight,
// with a Synchronize after each batch, and checks the device holds the pattern.
func smallCopies(e *env, size int64, repeat int, copyOnce func(*device.Buffer, *device.HostBuffer) *actor.Future[struct{}]) (float64, *float64, error) {
	host, err := e.dev.MallocPinnedBytes(e.ctx, uint64(size))
	if err != nil {
		return 0, nil, err
	}
	defer host.Close(e.ctx)
	buf, err := e.dev.MallocBytes(e.ctx, uint64(size))
	if err != nil {
		return 0, nil, err
	}
	defer buf.Close(e.ctx)
	fillPattern(host.Host(), 11)
	var samples []float64
	for r := -1; r < repeat; r++ {
		start := time.Now()
		if err := inFlight(e, launchesPerRepeat, func() *actor.Future[struct{}] { return copyOnce(buf, host) }); err != nil {
			return 0, nil, err
		}
		if err := e.dev.Synchronize(e.ctx); err != nil {
			return 0, nil, err
		}
		if r >= 0 {
			samples = append(samples, float64(time.Since(start).Nanoseconds())/1e3/launchesPerRepeat)
		}
	}
	return median(samples), nil, checkDevice(e, buf, host.Host())
}

// inFlight issues n operations keeping up to 64 futures outstanding, and waits for them all.
func inFlight(e *env, n int, issue func() *actor.Future[struct{}]) error {
	const window = 64
	var ring [window]*actor.Future[struct{}]
	for i := range n {
		if f := ring[i%window]; f != nil {
			if _, err := f.Await(e.ctx); err != nil {
				return err
			}
		}
		ring[i%window] = issue()
	}
	for _, f := range ring {
		if f != nil {
			if _, err := f.Await(e.ctx); err != nil {
				return err
			}
		}
	}
	return nil
}

// pinnedBandwidth: back-to-back async copies between a pinned buffer and the device, one
// Synchronize per batch.
func pinnedBandwidth(h2d bool) func(*env, int64, int) (float64, *float64, error) {
	return func(e *env, size int64, repeat int) (float64, *float64, error) {
		host, err := e.dev.MallocPinnedBytes(e.ctx, uint64(size))
		if err != nil {
			return 0, nil, err
		}
		defer host.Close(e.ctx)
		return bandwidth(e, size, repeat, h2d, host.Host(), func(buf *device.Buffer) error {
			var last *actor.Future[struct{}]
			for range clampIters(size) {
				if h2d {
					last = streams.Default(e.dev).CopyHostToDevice(e.ctx, buf, host)
				} else {
					last = streams.Default(e.dev).CopyDeviceToHost(e.ctx, host, buf)
				}
			}
			if err := e.dev.Synchronize(e.ctx); err != nil {
				return err
			}
			_, err := last.Await(e.ctx)
			return err
		})
	}
}

// stagedBandwidth: streams.CopyToDevice / CopyFromDevice of a plain Go slice, staged through
// the device's pinned slots, queued back to back and awaited at the end of the batch, as the
// C++ rows it is held to copy: the pinned rows (cudaMemcpyAsync, one synchronize a batch),
// and the runtime's pageable copy (cudaMemcpy after cudaMemcpy, one synchronize a batch), whose
// uploads return once staged. Staging aims at 0.8× of pinned memory's bandwidth for large
// copies and at least the pageable copy's at every size. Its byHand row, C++ staging the same
// copies by hand, shows how near the host lets staging come. Uploads all read one slice;
// downloads write to stagedTargets slices in turn, each awaited before it is written again,
// so that no two copies write one slice at once.
func stagedBandwidth(h2d bool) func(*env, int64, int) (float64, *float64, error) {
	return func(e *env, size int64, repeat int) (float64, *float64, error) {
		var opts []streams.Option
		if e.copiers > 0 {
			opts = append(opts, streams.StagingWorkers(e.copiers))
		}
		s, err := streams.New(e.ctx, e.dev, opts...)
		if err != nil {
			return 0, nil, err
		}
		defer s.Close(e.ctx)
		targets := [][]byte{make([]byte, size)}
		if !h2d {
			for range stagedTargets(size) - 1 {
				targets = append(targets, make([]byte, size))
			}
		}
		defer func() {
			up, down := s.StagingWorkers()
			fmt.Fprintf(os.Stderr, "staged %d B: %d upload and %d download workers\n", size, up, down)
		}()
		host := targets[0]
		value, p99, err := bandwidth(e, size, repeat, h2d, host, func(buf *device.Buffer) error {
			n := clampIters(size)
			fs := make([]*streams.Future, n)
			for i := range n {
				if h2d {
					fs[i] = streams.CopyToDevice(e.ctx, s, buf, host)
					continue
				}
				k := len(targets)
				if i >= k {
					if _, err := fs[i-k].Await(e.ctx); err != nil {
						return err
					}
				}
				fs[i] = streams.CopyFromDevice(e.ctx, s, targets[i%k], buf)
			}
			for _, f := range fs {
				if _, err := f.Await(e.ctx); err != nil {
					return err
				}
			}
			return nil
		})
		// Every target holds the device's bytes: bandwidth checked the first, and the others
		// are compared with it here, outside the timed batches, as the C++ rows check nothing
		// while timed.
		for _, t := range targets[1:] {
			if err == nil && !bytes.Equal(t, host) {
				err = errors.New("staged download: the copies' targets differ")
			}
		}
		return value, p99, err
	}
}

// stagedTargets is how many slices the staged downloads of size bytes rotate through: up to 8,
// within 64 MiB.
func stagedTargets(size int64) int {
	return int(min(max((64<<20)/max(size, 1), 1), 8))
}

// bandwidth times batches of clampIters(size) copies between host and a device buffer, after
// seeding the source side with a pattern, and checks the destination afterwards.
func bandwidth(e *env, size int64, repeat int, h2d bool, host []byte, batch func(*device.Buffer) error) (float64, *float64, error) {
	buf, err := e.dev.MallocBytes(e.ctx, uint64(size))
	if err != nil {
		return 0, nil, err
	}
	defer buf.Close(e.ctx)
	want := make([]byte, size)
	fillPattern(want, int(size))
	if h2d {
		copy(host, want)
	} else if err := streams.CopyToDevice(e.ctx, streams.Default(e.dev), buf, want).Wait(e.ctx); err != nil {
		return 0, nil, err
	}
	var samples []float64
	for r := -1; r < repeat; r++ {
		start := time.Now()
		if err := batch(buf); err != nil {
			return 0, nil, err
		}
		if r >= 0 {
			samples = append(samples, float64(size)*float64(clampIters(size))/time.Since(start).Seconds()/1e9)
		}
	}
	if h2d {
		return median(samples), nil, checkDevice(e, buf, want)
	}
	return median(samples), nil, checkBytes(host, want)
}

// deviceBandwidth: device-to-device copies, counting bytes read plus bytes written.
func deviceBandwidth(e *env, size int64, repeat int) (float64, *float64, error) {
	a, err := e.dev.MallocBytes(e.ctx, uint64(size))
	if err != nil {
		return 0, nil, err
	}
	defer a.Close(e.ctx)
	b, err := e.dev.MallocBytes(e.ctx, uint64(size))
	if err != nil {
		return 0, nil, err
	}
	defer b.Close(e.ctx)
	want := make([]byte, size)
	fillPattern(want, 5)
	if err := streams.CopyToDevice(e.ctx, streams.Default(e.dev), a, want).Wait(e.ctx); err != nil {
		return 0, nil, err
	}
	const iters = 10
	var samples []float64
	for r := -1; r < repeat; r++ {
		start := time.Now()
		for range iters {
			streams.Default(e.dev).Copy(e.ctx, b, a)
		}
		if err := e.dev.Synchronize(e.ctx); err != nil {
			return 0, nil, err
		}
		if r >= 0 {
			samples = append(samples, 2*float64(size)*iters/time.Since(start).Seconds()/1e9)
		}
	}
	return median(samples), nil, checkDevice(e, b, want)
}

// mallocFree: Malloc and Free of size bytes, as pairs.
func mallocFree(e *env, size int64, repeat int) (float64, *float64, error) {
	const pairs = 200
	var samples []float64
	for r := -1; r < repeat; r++ {
		start := time.Now()
		for range pairs {
			b, err := e.dev.MallocBytes(e.ctx, uint64(size))
			if err != nil {
				return 0, nil, err
			}
			if err := b.Close(e.ctx); err != nil {
				return 0, nil, err
			}
		}
		if r >= 0 {
			samples = append(samples, float64(time.Since(start).Nanoseconds())/1e3/pairs)
		}
	}
	return median(samples), nil, nil
}

// bindingCall times a trivial runtime call made straight through the binding on a locked
// thread (onBinding): the binding's own per-call cost, without the actor.
func bindingCall(call func(backend.Device, backend.Stream, backend.Event) error) func(*env, int64, int) (float64, *float64, error) {
	return onBinding(func(dd *direct, _ int64, repeat int) (float64, error) {
		ev, err := dd.dev.EventCreate(backend.EventDisableTiming)
		if err != nil {
			return 0, err
		}
		defer dd.dev.EventDestroy(ev)
		const calls = 100000
		us, err := timedRepeats(dd, calls, repeat, func() error {
			for range calls {
				if err := call(dd.dev, dd.stream, ev); err != nil {
					return err
				}
			}
			return nil
		})
		return us * 1e3, err
	})
}

func checkDevice(e *env, buf *device.Buffer, want []byte) error {
	got := make([]byte, len(want))
	if err := streams.CopyFromDevice(e.ctx, streams.Default(e.dev), got, buf).Wait(e.ctx); err != nil {
		return err
	}
	return checkBytes(got, want)
}

func checkBytes(got, want []byte) error {
	if !bytes.Equal(got, want) {
		for i := range want {
			if got[i] != want[i] {
				return fmt.Errorf("check failed: byte %d is %#x, want %#x", i, got[i], want[i])
			}
		}
	}
	return nil
}
