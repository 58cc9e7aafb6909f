package main

import (
	"fmt"
	"os"
	"time"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/streams"
)

// streamScenarios are the rows of stream operations whose futures complete when the GPU
// reaches them. Against C++ issuing the same operations with no futures at all, they show what
// completion tracking costs (the target is ≤ 1.1×). stream_launch_N (N goroutines, a stream
// each) is held to N C++ threads doing the same, each on a stream of its own
// (launch_threads_N in bench/cbaseline/threads.h).
func streamScenarios() []scenario {
	return []scenario{
		{name: "stream_launch", unit: "us/launch", ref: "launch_enqueue", run: traced("stream_launch", func(e *env, _ int64, r int) (float64, *float64, error) {
			return streamLaunchRate(e, 1, r)
		})},
		{name: "stream_launch_8", manyStreams: true, unit: "us/launch", ref: "launch_threads_8", run: traced("stream_launch_8", func(e *env, _ int64, r int) (float64, *float64, error) {
			return streamLaunchRate(e, 8, r)
		})},
		{name: "stream_launch_64", manyStreams: true, unit: "us/launch", ref: "launch_threads_64", run: traced("stream_launch_64", func(e *env, _ int64, r int) (float64, *float64, error) {
			return streamLaunchRate(e, 64, r)
		})},
		{name: "stream_h2d_async_64B", unit: "us/copy", size: 64, ref: "h2d_async_64B", run: traced("stream_h2d_async_64B", streamSmallCopies)},
		// launch_roundtrip on a stream of its own, among the rows that run after work on many
		// streams, just before group_roundtrip, whose job gets such a stream: the step between
		// the two, so that group_roundtrip − launch_roundtrip splits into the group's own cost
		// and the stream's and the run's position (the differences table, diffs_report.go).
		{name: "stream_roundtrip", manyStreams: true, unit: "us", ref: "launch_roundtrip", run: streamRoundTrip},
	}
}

// streamRoundTrip is launchRoundTrip on a stream of its own.
func streamRoundTrip(e *env, _ int64, repeat int) (float64, *float64, error) {
	s, err := streams.New(e.ctx, e.dev)
	if err != nil {
		return 0, nil, err
	}
	defer s.Close(e.ctx)
	return roundTrips(e, repeat, s)
}

// streamLaunchRate: g goroutines, each with a stream of its own on the env's device, keep up
// to 64 launches in flight and await the oldest future (completed by the GPU reaching it)
// before the next.
func streamLaunchRate(e *env, g, repeat int) (float64, *float64, error) {
	ss := make([]*streams.Stream, g)
	ks := make([]*device.Kernel, g)
	for i := range ss {
		s, err := streams.New(e.ctx, e.dev)
		if err != nil {
			return 0, nil, err
		}
		defer s.Close(e.ctx)
		ss[i], ks[i] = s, e.empty
	}
	return launchOnStreams(e, ss, ks, repeat)
}

// launchOnStreams is streamLaunchRate's loop over streams made by its caller: goroutine i
// launches ks[i] (a kernel of ss[i]'s device) on ss[i], 64 futures in flight. Per-launch time
// is the batch's time over every goroutine's launches.
func launchOnStreams(e *env, ss []*streams.Stream, ks []*device.Kernel, repeat int) (float64, *float64, error) {
	g := len(ss)
	per := launchesPerRepeat / g
	var samples []float64
	for r := -1; r < repeat; r++ {
		start := time.Now()
		if err := fanOut(g, func(i int) error {
			return inFlight(e, per, func() *streams.Future { return ss[i].Launch(e.ctx, ks[i], one) })
		}); err != nil {
			return 0, nil, err
		}
		if r >= 0 {
			samples = append(samples, float64(time.Since(start).Nanoseconds())/1e3/float64(per*g))
		}
	}
	return median(samples), nil, nil
}

// streamSmallCopies: 64-byte pinned-to-device copies on a stream, 64 futures in flight.
func streamSmallCopies(e *env, size int64, repeat int) (float64, *float64, error) {
	s, err := streams.New(e.ctx, e.dev)
	if err != nil {
		return 0, nil, err
	}
	defer s.Close(e.ctx)
	return smallCopies(e, size, repeat, func(buf *device.Buffer, host *device.HostBuffer) *streams.Future {
		return s.CopyHostToDevice(e.ctx, buf, host)
	})
}

// traced logs, on stderr, what the device's completion tracking did during a row: how many
// operations shared a watermark, how often it asked the GPU.
func traced(name string, run func(*env, int64, int) (float64, *float64, error)) func(*env, int64, int) (float64, *float64, error) {
	return func(e *env, size int64, repeat int) (float64, *float64, error) {
		before := e.dev.Stats().Tracker
		v, p, err := run(e, size, repeat)
		after := e.dev.Stats().Tracker
		ops := after.Completed - before.Completed
		marks := max(after.Watermarks-before.Watermarks, 1)
		fmt.Fprintf(os.Stderr, "%s %d B: %d ops, %d watermarks (%.1f ops each), %d queries, %d polls\n", name, size,
			ops, marks, float64(ops)/float64(marks), after.Queries-before.Queries, after.Polls-before.Polls)
		return v, p, err
	}
}
