package main

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/streams"
)

// The submitter rows ask whether more submission threads per device would close the gap
// between stream_launch_N (N goroutines, a stream each, one actor serialising the device's
// launches) and N C++ threads (launch_threads_N): the same work, the goroutines' streams
// spread round-robin over K handles of the bench's device, each its own actor on its own
// locked OS thread, all sharing the GPU's primary context. K handles of one ordinal are
// independent actors the library supports (docs/design/submitters.md): each releases only
// what it made, so the extra ones are opened for a row and closed once its work is done.
// binding_launch_threads_N is launch_threads_N through the binding from N locked threads, no
// actor: the floor under N lanes. The rows are opt-in (-scenarios names them): they measure a
// design, not the library.

// submitterRow is stream_launch_<goroutines> spread over k handles.
type submitterRow struct{ goroutines, k int }

var submitterRows = []submitterRow{{8, 2}, {8, 4}, {8, 8}, {64, 4}, {64, 8}}

// submitterScenarios are the submitterRows' rows, held to the C++ rows of their goroutine
// count, and launch_roundtrip_k4: a round trip on the env's device while three more handles
// of it sit idle, which says what idle extra actors cost the one that works.
func submitterScenarios() []scenario {
	var out []scenario
	for _, r := range submitterRows {
		name := fmt.Sprintf("stream_launch_%d_k%d", r.goroutines, r.k)
		out = append(out, scenario{name: name, manyStreams: true, optIn: true, unit: "us/launch",
			ref: fmt.Sprintf("launch_threads_%d", r.goroutines),
			run: func(e *env, _ int64, repeat int) (float64, *float64, error) {
				return submittersLaunchRate(e, name, r.goroutines, r.k, repeat)
			}})
	}
	for _, n := range []int{8, 64} {
		out = append(out, scenario{name: fmt.Sprintf("binding_launch_threads_%d", n), manyStreams: true, optIn: true, unit: "us/launch",
			ref: fmt.Sprintf("launch_threads_%d", n), run: bindingLaunchThreads(n)})
	}
	return append(out, scenario{name: "launch_roundtrip_k4", manyStreams: true, optIn: true, unit: "us", ref: "launch_roundtrip",
		run: func(e *env, _ int64, repeat int) (float64, *float64, error) {
			return idleSubmittersRoundTrip(e, 4, repeat)
		}})
}

// bindingLaunchThreads is launch_threads_<n> through gpuactor's binding, with no actor: n
// goroutines, each locked to an OS thread of its own with a direct device (its own stream and
// copy of the empty kernel), launch their share of the empty kernels on their streams and
// synchronize them; a batch is timed from its start on every thread to the last one's
// synchronize. It is the floor that calling libcudart through purego from n threads puts
// under n lanes, as binding_launch_enqueue is one actor's.
func bindingLaunchThreads(n int) func(*env, int64, int) (float64, *float64, error) {
	return func(e *env, _ int64, repeat int) (float64, *float64, error) {
		per := launchesPerRepeat / n
		rounds := repeat + 1 // the first warms up
		starts := make([]chan struct{}, rounds)
		for r := range starts {
			starts[r] = make(chan struct{})
		}
		quit := make(chan struct{})
		ready := make(chan error, n)
		done := make(chan error, n*rounds) // never blocks a worker
		var workers sync.WaitGroup
		defer func() { close(quit); workers.Wait() }()
		for range n {
			workers.Go(func() {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				dd, err := e.binding()
				ready <- err
				if err != nil {
					return
				}
				defer dd.close()
				for r := range rounds {
					select {
					case <-starts[r]:
					case <-quit:
						return
					}
					done <- launchBatch(dd, per)
				}
			})
		}
		var errs []error
		for range n {
			errs = append(errs, <-ready)
		}
		if err := errors.Join(errs...); err != nil {
			return 0, nil, err
		}
		var samples []float64
		for r := range rounds {
			start := time.Now()
			close(starts[r])
			for range n {
				errs = append(errs, <-done)
			}
			if err := errors.Join(errs...); err != nil {
				return 0, nil, err
			}
			if r > 0 {
				samples = append(samples, float64(time.Since(start).Nanoseconds())/1e3/float64(per*n))
			}
		}
		return median(samples), nil, nil
	}
}

// launchBatch queues n empty launches on dd's stream and synchronizes it.
func launchBatch(dd *direct, n int) error {
	for range n {
		if err := dd.dev.Launch(dd.empty, cuda.Dim(1), cuda.Dim(1), 0, dd.stream, nil); err != nil {
			return err
		}
	}
	return dd.dev.StreamSynchronize(dd.stream)
}

// submitter is one handle of the env's device with the empty kernel loaded on it.
type submitter struct {
	dev   *device.Device
	empty *device.Kernel
}

// openSubmitters returns k handles of the env's device: the env's own first, then k-1 more
// opened with its options, each with the empty kernel compiled and launched once. close
// closes the extra ones; the env's own stays open. On the simulator without -sim-devices each
// extra handle is a simulated machine of its own, as the group rows' devices are.
func (e *env) openSubmitters(k int) (subs []submitter, closeAll func() error, err error) {
	if k < 1 {
		return nil, nil, fmt.Errorf("want at least one submitter, got %d", k)
	}
	subs = []submitter{{e.dev, e.empty}}
	closeAll = func() error {
		var errs []error
		for _, s := range subs[1:] {
			errs = append(errs, s.dev.Close())
		}
		return errors.Join(errs...)
	}
	for range k - 1 {
		d, err := device.Open(e.ctx, e.dev.Ordinal(), e.devOpts...)
		if err != nil {
			return nil, nil, errors.Join(fmt.Errorf("opening handle %d of device %d: %w", len(subs), e.dev.Ordinal(), err), closeAll())
		}
		subs = append(subs, submitter{dev: d})
		s := &subs[len(subs)-1]
		if s.empty, err = loadEmpty(e.ctx, d); err == nil {
			err = streams.Default(d).Launch(e.ctx, s.empty, one).Wait(e.ctx)
		}
		if err != nil {
			return nil, nil, errors.Join(fmt.Errorf("handle %d of device %d: %w", len(subs)-1, e.dev.Ordinal(), err), closeAll())
		}
	}
	return subs, closeAll, nil
}

// submittersLaunchRate is stream_launch_<g> with goroutine i's stream made on handle i mod k
// of the env's device. It checks that every handle's tracker completed the launches of its
// streams, and logs, on stderr, each handle's share and its watermarks and queries.
func submittersLaunchRate(e *env, name string, g, k, repeat int) (v float64, p99 *float64, err error) {
	subs, closeSubs, err := e.openSubmitters(k)
	if err != nil {
		return 0, nil, err
	}
	defer func() { err = errors.Join(err, closeSubs()) }() // after the streams' Close
	ss := make([]*streams.Stream, g)
	ks := make([]*device.Kernel, g)
	want := make([]uint64, k) // launches each handle's streams will complete
	for i := range ss {
		sub := subs[i%k]
		s, err := streams.New(e.ctx, sub.dev)
		if err != nil {
			return 0, nil, err
		}
		defer s.Close(e.ctx)
		ss[i], ks[i] = s, sub.empty
		want[i%k] += uint64((repeat + 1) * (launchesPerRepeat / g))
	}
	before := make([]device.TrackerStats, k)
	for j, s := range subs {
		before[j] = s.dev.Stats().Tracker
	}
	v, p99, err = launchOnStreams(e, ss, ks, repeat)
	if err != nil {
		return 0, nil, err
	}
	for j, s := range subs {
		after := s.dev.Stats().Tracker
		ops, marks := after.Completed-before[j].Completed, max(after.Watermarks-before[j].Watermarks, 1)
		fmt.Fprintf(os.Stderr, "%s handle %d: %d ops, %d watermarks (%.1f ops each), %d queries, %d polls\n", name, j,
			ops, marks, float64(ops)/float64(marks), after.Queries-before[j].Queries, after.Polls-before[j].Polls)
		if ops < want[j] {
			err = errors.Join(err, fmt.Errorf("handle %d of %d completed %d operations, want at least its streams' %d launches", j, k, ops, want[j]))
		}
	}
	return v, p99, err
}

// idleSubmittersRoundTrip is launch_roundtrip on the env's device's own stream while k-1
// more handles of the device are open and idle.
func idleSubmittersRoundTrip(e *env, k, repeat int) (v float64, p99 *float64, err error) {
	_, closeSubs, err := e.openSubmitters(k)
	if err != nil {
		return 0, nil, err
	}
	defer func() { err = errors.Join(err, closeSubs()) }()
	return roundTrips(e, repeat, streams.Default(e.dev))
}
