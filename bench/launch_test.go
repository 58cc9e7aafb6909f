package main

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/testgpu"
	"github.com/gpuactor/gpuactor/streams"
)

// eachBackend runs fn on the simulator and, when there is one, the GPU.
func eachBackend(b *testing.B, fn func(b *testing.B, dev *device.Device, k *device.Kernel)) {
	for _, kind := range []device.BackendKind{device.BackendSim, device.BackendCUDA} {
		b.Run(string(kind), func(b *testing.B) {
			if kind == device.BackendCUDA {
				testgpu.Need(b, gpuPresent(context.Background()), "the cuda backend sees no device")
			}
			ctx := context.Background()
			dev, err := device.Open(ctx, 0, device.WithBackend(kind))
			if err != nil {
				b.Fatal(err)
			}
			defer dev.Close()
			mod, err := dev.Compile(ctx, device.Source{Name: "empty.cu", Code: emptySource, Sim: emptySim})
			if err != nil {
				b.Fatal(err)
			}
			k, err := mod.Kernel(ctx, "empty")
			if err != nil {
				b.Fatal(err)
			}
			if err := streams.Default(dev).Launch(ctx, k, one).Wait(ctx); err != nil { // warm up: module load, first launch
				b.Fatal(err)
			}
			fn(b, dev, k)
		})
	}
}

func reportMicros(b *testing.B, ops int) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1e3/float64(ops), "µs/launch")
}

// BenchmarkRoundTrip: submit an empty launch and await its completion on the GPU.
func BenchmarkRoundTrip(b *testing.B) {
	eachBackend(b, func(b *testing.B, dev *device.Device, k *device.Kernel) {
		ctx := context.Background()
		for b.Loop() {
			if err := streams.Default(dev).Launch(ctx, k, one).Wait(ctx); err != nil {
				b.Fatal(err)
			}
		}
		reportMicros(b, b.N)
	})
}

// BenchmarkPipelined: g goroutines at once, each keeping up to 64 launches on the device's own
// stream in flight and awaiting the oldest before sending another.
func BenchmarkPipelined(b *testing.B) {
	for _, g := range []int{1, 8, 64} {
		b.Run(goroutines(g), func(b *testing.B) {
			eachBackend(b, func(b *testing.B, dev *device.Device, k *device.Kernel) {
				ctx := context.Background()
				per := b.N/g + 1
				b.ResetTimer()
				e := &env{ctx: ctx, dev: dev, empty: k}
				if err := fanOut(g, func(int) error {
					return inFlight(e, per, func() *actor.Future[struct{}] { return streams.Default(dev).Launch(ctx, k, one) })
				}); err != nil {
					b.Fatal(err)
				}
				if err := dev.Synchronize(ctx); err != nil {
					b.Fatal(err)
				}
				reportMicros(b, per*g)
			})
		})
	}
}

func goroutines(g int) string { return fmt.Sprintf("goroutines=%d", g) }

// directOn opens device 0 through the binding on the calling, locked thread, with no actor.
func directOn(b *testing.B) (backend.Device, backend.Kernel, backend.Stream) {
	testgpu.Need(b, gpuPresent(context.Background()), "the cuda backend sees no device")
	runtime.LockOSThread()
	b.Cleanup(runtime.UnlockOSThread)
	d, err := openDirect(device.BackendCUDA, 0)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(d.close)
	return d.dev, d.empty, d.stream
}

// BenchmarkDirectRoundTrip: cudaLaunchKernel + cudaStreamSynchronize from one locked thread.
func BenchmarkDirectRoundTrip(b *testing.B) {
	dev, k, s := directOn(b)
	for b.Loop() {
		if err := dev.Launch(k, cuda.Dim(1), cuda.Dim(1), 0, s, nil); err != nil {
			b.Fatal(err)
		}
		if err := dev.StreamSynchronize(s); err != nil {
			b.Fatal(err)
		}
	}
	reportMicros(b, b.N)
}

// BenchmarkDirectLaunch: cudaLaunchKernel in a loop from one locked thread, one synchronize.
func BenchmarkDirectLaunch(b *testing.B) {
	dev, k, s := directOn(b)
	for b.Loop() {
		if err := dev.Launch(k, cuda.Dim(1), cuda.Dim(1), 0, s, nil); err != nil {
			b.Fatal(err)
		}
	}
	if err := dev.StreamSynchronize(s); err != nil {
		b.Fatal(err)
	}
	reportMicros(b, b.N)
}

// BenchmarkDirectStreamQuery: the cost of one trivial binding call.
func BenchmarkDirectStreamQuery(b *testing.B) {
	dev, _, s := directOn(b)
	for b.Loop() {
		if err := dev.StreamQuery(s); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/call")
}

// BenchmarkDirectGraphLaunch: cudaGraphLaunch of a one-kernel graph from one locked thread,
// in rounds of 100 then a synchronize, as the C++ rows graph_launch (the calls alone,
// call-us/launch) and graph_node 1B (the whole round, µs/launch) do: the binding's floor
// under gpuactor's graph rows.
func BenchmarkDirectGraphLaunch(b *testing.B) {
	dev, k, s := directOn(b)
	g, err := dev.GraphCreate()
	require.NoError(b, err)
	defer dev.GraphDestroy(g)
	_, err = dev.GraphAddKernelNode(g, nil, backend.KernelNode{Kernel: k, Grid: cuda.Dim(1), Block: cuda.Dim(1)})
	require.NoError(b, err)
	x, err := dev.GraphInstantiate(g, 0)
	require.NoError(b, err)
	defer dev.GraphExecDestroy(x)
	var calls time.Duration
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		if err := dev.GraphLaunch(x, s); err != nil {
			b.Fatal(err)
		}
		calls += time.Since(start)
		if i%100 == 99 {
			require.NoError(b, dev.StreamSynchronize(s))
		}
	}
	require.NoError(b, dev.StreamSynchronize(s))
	b.ReportMetric(float64(calls.Nanoseconds())/1e3/float64(b.N), "call-us/launch")
	reportMicros(b, b.N)
}

// BenchmarkDirectMallocAsyncPair: cudaMallocAsync + cudaFreeAsync of 1 MiB from the default
// pool on one stream, from one locked thread, in rounds of 200 pairs then a synchronize, as
// the C++ row mallocasync_free does: the binding's floor under mallocasync_free_pair.
func BenchmarkDirectMallocAsyncPair(b *testing.B) {
	dev, _, s := directOn(b)
	for i := 0; b.Loop(); i++ {
		p, err := dev.MallocAsync(1<<20, s)
		if err != nil {
			b.Fatal(err)
		}
		if err := dev.FreeAsync(p, s); err != nil {
			b.Fatal(err)
		}
		if i%200 == 199 {
			require.NoError(b, dev.StreamSynchronize(s))
		}
	}
	require.NoError(b, dev.StreamSynchronize(s))
	reportMicros(b, b.N)
}

// BenchmarkDirectEventQuery: cudaEventQuery of an event whose record has completed, the call
// the completion tracker makes per poll of a stream's oldest watermark.
func BenchmarkDirectEventQuery(b *testing.B) {
	dev, k, s := directOn(b)
	ev, err := dev.EventCreate(backend.EventDisableTiming)
	require.NoError(b, err)
	defer dev.EventDestroy(ev)
	require.NoError(b, dev.Launch(k, cuda.Dim(1), cuda.Dim(1), 0, s, nil))
	require.NoError(b, dev.EventRecord(ev, s))
	require.NoError(b, dev.StreamSynchronize(s))
	for b.Loop() {
		if err := dev.EventQuery(ev); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/call")
}
