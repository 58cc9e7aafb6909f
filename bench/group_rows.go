package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/gpuactor/gpuactor/internal/spin"
	"os"
	"sync"
	"time"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/group"
	"github.com/gpuactor/gpuactor/streams"
)

// The group rows: jobs fanned out by group.Group. A GPU-bound job is one launch of busy, the
// kernel the C++ baseline's busy_jobs and busy_roundtrip rows launch, with the same grid:
// every SM filled for busyCycles clocks, so that one GPU runs one job at a time and two run
// two.
func groupScenarios() []scenario {
	rows := []scenario{
		// Scheduling overhead: a trivial job (an empty launch, awaited) through the group, one
		// at a time, against launch_roundtrip, the same launch sent straight to a stream: with
		// Do, and with Submit and Wait.
		{name: "group_roundtrip", unit: "us", ref: "launch_roundtrip", manyStreams: true, run: groupRoundTrip(true)},
		{name: "group_submit_roundtrip", unit: "us", ref: "launch_roundtrip", manyStreams: true, run: groupRoundTrip(false)},
	}
	// Scaling: GPU-bound jobs per second through the group on one GPU, on the first 2, 4 and
	// 8, and on every GPU, each against one GPU driven straight from C++: a row's ratio is its
	// scaling (scaling_report.go). A row of more GPUs than the machine has, or of all of them,
	// is skipped: group_jobs_all is that row.
	for _, n := range []int{1, 2, 4, 8, fanoutAll} {
		name := fmt.Sprintf("group_jobs_%d", n)
		if n == fanoutAll {
			name = "group_jobs_all"
		}
		rows = append(rows, scenario{name: name, unit: "jobs/s", ref: "busy_jobs", manyStreams: true, fanout: n, run: groupJobs(n)})
	}
	// Tail latency: jobs arriving at a steady 80% of the group's measured capacity, every GPU;
	// submit-to-done p50 and p99, against one job's round trip in C++.
	return append(rows, scenario{name: "group_tail", unit: "us", ref: "busy_roundtrip", manyStreams: true, fanout: fanoutAll, run: groupTail})
}

const (
	busyCycles  = 300000
	busyThreads = 256
	busySource  = `extern "C" __global__ void busy(long long cycles) {
	long long start = clock64();
	while (clock64() - start < cycles) {}
}`
)

// busySim stands in for busy on the simulator: it takes busyCycles at 1.5 GHz.
var busySim = map[string]cuda.SimKernel{"busy": func(c *cuda.KernelCall) error {
	time.Sleep(time.Duration(c.Int64(0)) * time.Nanosecond * 2 / 3)
	return nil
}}

// busyJob is the GPU-bound job on one device: its kernel and grid.
type busyJob struct {
	k    *device.Kernel
	grid uint32
}

// groupDevices opens, on first use, the devices other than the env's, so that the group rows
// run on every device; the env closes them.
func (e *env) groupDevices() ([]*device.Device, error) {
	e.othersOnce.Do(func() {
		n, err := device.Count(e.ctx, e.devOpts...)
		if err != nil {
			e.othersErr = err
			return
		}
		for i := range n {
			if i == e.dev.Ordinal() {
				continue
			}
			d, err := device.Open(e.ctx, i, e.devOpts...)
			if err != nil {
				e.othersErr = err
				return
			}
			e.others = append(e.others, d)
		}
	})
	return append([]*device.Device{e.dev}, e.others...), e.othersErr
}

// busyJobs compiles busy on each of devs, once per device for the run.
func (e *env) busyJobs(devs []*device.Device) (map[int]busyJob, error) {
	e.busyMu.Lock()
	defer e.busyMu.Unlock()
	if e.busy == nil {
		e.busy = map[int]busyJob{}
	}
	for _, d := range devs {
		if _, ok := e.busy[d.Ordinal()]; ok {
			continue
		}
		mod, err := d.Compile(e.ctx, device.Source{Name: "busy.cu", Code: busySource, Sim: busySim})
		if err != nil {
			return nil, err
		}
		k, err := mod.Kernel(e.ctx, "busy")
		if err != nil {
			return nil, err
		}
		p := d.Properties()
		e.busy[d.Ordinal()] = busyJob{k: k, grid: uint32(p.MultiProcessors * max(1, p.MaxThreadsPerSM/busyThreads))}
	}
	return e.busy, nil
}

// run launches the busy kernel on s and waits until the GPU has run it.
func (b busyJob) run(ctx context.Context, s *streams.Stream) error {
	return s.Launch(ctx, b.k, cuda.LaunchConfig{Grid: cuda.Dim(b.grid), Block: cuda.Dim(busyThreads)}, int64(busyCycles)).Wait(ctx)
}

// groupRoundTrip times trivial jobs through a group of the env's device, one stream, each
// sent once the one before it completed: by Do, or by Submit and Wait.
func groupRoundTrip(do bool) func(*env, int64, int) (float64, *float64, error) {
	return func(e *env, _ int64, repeat int) (float64, *float64, error) {
		g, err := group.New(e.ctx, []*device.Device{e.dev}, group.WithStreams(1))
		if err != nil {
			return 0, nil, err
		}
		defer g.Close(context.Background())
		job := func(ctx context.Context, _ *device.Device, s *streams.Stream) error {
			return s.Launch(ctx, e.empty, one).Wait(ctx)
		}
		send := func() error { return g.Submit(e.ctx, job).Wait(e.ctx) }
		if do {
			send = func() error { return g.Do(e.ctx, job) }
		}
		const iters = 2000
		var all []float64
		for r := -1; r < repeat; r++ {
			for range iters {
				start := time.Now()
				if err := send(); err != nil {
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
}

// fanoutAll is scenario.fanout for a row over every device of the machine.
const fanoutAll = -1

// groupJobs measures GPU-bound jobs per second through a group of the first n devices (the
// env's first), or of every device (fanoutAll): each repeat submits a batch of jobs and waits
// for them all.
func groupJobs(n int) func(*env, int64, int) (float64, *float64, error) {
	return func(e *env, _ int64, repeat int) (float64, *float64, error) {
		devs := []*device.Device{e.dev}
		if n != 1 {
			all, err := e.groupDevices()
			if err != nil {
				return 0, nil, err
			}
			switch {
			case n == fanoutAll:
				devs = all
			case n >= len(all):
				return 0, nil, fmt.Errorf("%w: the machine has %d devices; group_jobs_all runs on them all", errSkipped, len(all))
			default:
				devs = all[:n]
			}
		}
		fmt.Fprintf(os.Stderr, "group_jobs: %d devices\n", len(devs))
		g, jobs, err := e.busyGroup(devs)
		if err != nil {
			return 0, nil, err
		}
		defer g.Close(context.Background())
		batch := e.busyBatch() * len(devs)
		var rates []float64
		for r := -1; r < repeat; r++ {
			rate, err := jobRate(e.ctx, g, jobs, batch)
			if err != nil {
				return 0, nil, err
			}
			if r >= 0 {
				rates = append(rates, rate)
			}
		}
		return median(rates), nil, nil
	}
}

// fanoutDevices is how many devices a row of the given fanout runs on in e's machine: 0 for a
// row that is not a fan-out row.
func (e *env) fanoutDevices(fanout int) int {
	if fanout != fanoutAll {
		return fanout
	}
	n, err := device.Count(e.ctx, e.devOpts...)
	if err != nil {
		return 0
	}
	return n
}

// busyBatch is how many jobs a device gets in a batch: two seconds' worth on a GPU, fewer on
// the simulator, whose kernels sleep and whose rows are for CI.
func (e *env) busyBatch() int {
	if e.dev.Backend() == device.BackendSim {
		return 50
	}
	return 2000
}

func (e *env) busyGroup(devs []*device.Device) (*group.Group, map[int]busyJob, error) {
	jobs, err := e.busyJobs(devs)
	if err != nil {
		return nil, nil, err
	}
	g, err := group.New(e.ctx, devs)
	return g, jobs, err
}

// jobRate submits n busy jobs to g and returns how many completed a second.
func jobRate(ctx context.Context, g *group.Group, jobs map[int]busyJob, n int) (float64, error) {
	job := func(ctx context.Context, d *device.Device, s *streams.Stream) error {
		return jobs[d.Ordinal()].run(ctx, s)
	}
	fs := make([]actor.Waiter, n)
	start := time.Now()
	for i := range fs {
		fs[i] = g.Submit(ctx, job)
	}
	if err := actor.WaitAll(ctx, fs...); err != nil {
		return 0, err
	}
	return float64(n) / time.Since(start).Seconds(), nil
}

// groupTail offers busy jobs to a group of every device at a steady 80% of the rate it
// sustained just before, and times each from when it was due to when its future completed.
// Timing from when it was due, not when it was sent, keeps a late sender from hiding delay.
func groupTail(e *env, _ int64, repeat int) (float64, *float64, error) {
	devs, err := e.groupDevices()
	if err != nil {
		return 0, nil, err
	}
	g, jobs, err := e.busyGroup(devs)
	if err != nil {
		return 0, nil, err
	}
	defer g.Close(context.Background())
	capacity, err := jobRate(e.ctx, g, jobs, e.busyBatch()*len(devs))
	if err != nil {
		return 0, nil, err
	}
	interval := time.Duration(float64(time.Second) / (0.8 * capacity))
	n := e.busyBatch() * len(devs)
	job := func(ctx context.Context, d *device.Device, s *streams.Stream) error {
		return jobs[d.Ordinal()].run(ctx, s)
	}
	before := loadStats(devs)
	lat := make([]float64, 0, n*repeat)
	var mu sync.Mutex
	var errs []error
	for range max(repeat, 1) {
		var wg sync.WaitGroup
		start := time.Now()
		for i := range n {
			due := start.Add(time.Duration(i) * interval)
			waitUntil(due)
			f := g.Submit(e.ctx, job)
			wg.Add(1)
			go func() {
				defer wg.Done()
				err := f.Wait(e.ctx)
				us := float64(time.Since(due).Nanoseconds()) / 1e3
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					errs = append(errs, err)
				}
				lat = append(lat, us)
			}()
		}
		wg.Wait()
	}
	if err := errors.Join(errs...); err != nil {
		return 0, nil, err
	}
	fmt.Fprintf(os.Stderr, "group_tail: %d devices, capacity %.0f jobs/s, offered %.0f jobs/s\n", len(devs), capacity, 0.8*capacity)
	before.report("group_tail", devs, len(lat))
	p99 := percentile(lat, 99)
	return median(lat), &p99, nil
}

// waitUntil returns at t: it sleeps most of the way and spins the rest, as a sleep alone can
// overshoot by tens of microseconds and would send jobs in bursts.
func waitUntil(t time.Time) {
	if d := time.Until(t) - 100*time.Microsecond; d > 0 {
		time.Sleep(d)
	}
	for time.Now().Before(t) {
	}
}

// rowStats is what a row's devices and the process's spin budget had done before it, so
// that the row can say what its own run made them do: how often the actors parked (a
// parked actor pays a wake for the next message or completion) and how often the budget
// refused a spinner.
type rowStats struct {
	actors []actor.Stats
	spin   spin.Stats
}

func loadStats(devs []*device.Device) rowStats {
	st := rowStats{spin: spin.Process().Stats()}
	for _, d := range devs {
		st.actors = append(st.actors, d.Stats().Actor)
	}
	return st
}

// report writes, on stderr, per device: parks and their time per job, spin and busy time per
// job, and the operations in flight now; and the spin budget's limit, peak and refusals.
func (b rowStats) report(row string, devs []*device.Device, jobs int) {
	after := loadStats(devs)
	per := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 / float64(max(jobs, 1)) }
	for i, d := range devs {
		a0, a1 := b.actors[i], after.actors[i]
		fmt.Fprintf(os.Stderr, "%s: device %d per job: %.2f parks, %.1f us parked, %.1f us spinning, %.1f us busy; in flight now %d\n", row, d.Ordinal(),
			float64(a1.Parks-a0.Parks)/float64(max(jobs, 1)), per(a1.Park-a0.Park), per(a1.Spin-a0.Spin), per(a1.Busy-a0.Busy), d.Stats().InFlight)
	}
	fmt.Fprintf(os.Stderr, "%s: spin budget limit %d, held now %d, peak %d, refusals %d during the row (%d before)\n", row,
		after.spin.Limit, after.spin.Held, after.spin.Peak, after.spin.Refusals-b.spin.Refusals, b.spin.Refusals)
}
