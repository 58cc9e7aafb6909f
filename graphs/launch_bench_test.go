package graphs_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/graphs"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
	"github.com/gpuactor/gpuactor/internal/nullgpu"
	isim "github.com/gpuactor/gpuactor/internal/sim"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/internal/testgpu"
	"github.com/gpuactor/gpuactor/sim"
	"github.com/gpuactor/gpuactor/streams"
)

// launchBackends runs bench on the simulator, on nullgpu (the GPU's part of each call free:
// gpuactor's own cost) and on the GPU when there is one, with an Exec of one empty kernel and
// a stream.
func launchBackends(b *testing.B, bench func(b *testing.B, dev *device.Device, x *graphs.Exec, s *streams.Stream)) {
	ctx := context.Background()
	run := func(b *testing.B, open func() (*device.Device, error)) {
		dev, x, s := chainBench(b, open, 1)
		b.ReportAllocs()
		b.ResetTimer()
		bench(b, dev, x, s)
	}
	b.Run("sim", func(b *testing.B) {
		run(b, func() (*device.Device, error) {
			return device.Open(ctx, 0, device.WithSimulator(sim.New()))
		})
	})
	b.Run("null", func(b *testing.B) {
		run(b, func() (*device.Device, error) {
			cd, err := core.Open(ctx, nullgpu.Backend{Backend: isim.New()}, core.Config{}, 0)
			return (*device.Device)(cd), err
		})
	})
	b.Run("cuda", func(b *testing.B) {
		testgpu.Need(b, testdev.GPU(), "the cuda backend sees no device")
		run(b, func() (*device.Device, error) { return device.Open(ctx, 0, device.WithBackend(device.BackendCUDA)) })
	})
}

// emptyChain instantiates a graph of n empty kernels, each after the previous one, on dev;
// the graph and the Exec are destroyed with b.
func emptyChain(b *testing.B, dev *device.Device, n int) *graphs.Exec {
	ctx := context.Background()
	mod, err := dev.Compile(ctx, device.Source{Name: "empty.cu", Code: `extern "C" __global__ void empty() {}`,
		Sim: map[string]cuda.SimKernel{"empty": func(*cuda.KernelCall) error { return nil }}})
	require.NoError(b, err)
	k, err := mod.Kernel(ctx, "empty")
	require.NoError(b, err)
	g, err := graphs.New(ctx, dev)
	require.NoError(b, err)
	b.Cleanup(func() { _ = g.Close(ctx) })
	deps := graphs.After()
	for range n {
		node, err := g.AddKernel(ctx, deps, k, cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(1)})
		require.NoError(b, err)
		deps = graphs.After(node)
	}
	x, err := g.Instantiate(ctx)
	require.NoError(b, err)
	b.Cleanup(func() { _ = x.Close(ctx) })
	return x
}

// chainBench opens a device with open and makes an Exec of n empty kernels and a stream on
// it, all destroyed with b: the stream first, the device last.
func chainBench(b *testing.B, open func() (*device.Device, error), n int) (*device.Device, *graphs.Exec, *streams.Stream) {
	ctx := context.Background()
	dev, err := open()
	require.NoError(b, err)
	b.Cleanup(func() { _ = dev.Close() }) // after emptyChain's cleanups
	x := emptyChain(b, dev, n)
	s, err := streams.New(ctx, dev)
	require.NoError(b, err)
	b.Cleanup(func() { _ = s.Close(ctx) })
	return dev, x, s
}

// BenchmarkLaunch: Exec.Launch of a graph of one empty kernel with up to 64 launches in
// flight, each awaited in turn: the per-launch cost of the path from a caller to
// cudaGraphLaunch and of the future that completes when the GPU has run it (bench's
// graph_node row compares it with C++).
func BenchmarkLaunch(b *testing.B) {
	launchBackends(b, func(b *testing.B, _ *device.Device, x *graphs.Exec, s *streams.Stream) {
		ctx := context.Background()
		const window = 64
		var ring [window]*streams.Future
		for i := range b.N {
			if f := ring[i%window]; f != nil {
				if _, err := f.Await(ctx); err != nil {
					b.Fatal(err)
				}
			}
			ring[i%window] = x.Launch(ctx, s)
		}
		for _, f := range ring {
			if f != nil {
				if _, err := f.Await(ctx); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

// BenchmarkLaunchBurst: rounds of 100 Exec.Launch calls issued back to back, each round
// ended by a no-op on the device's actor (which runs after every launch of the round), as
// bench's graph_launch row times it; then every future is awaited. caller-us/launch is the
// time the caller spends issuing, us/launch the whole round up to the no-op, read on the
// actor (the caller's wake-up from waiting is no launch's cost).
func BenchmarkLaunchBurst(b *testing.B) {
	launchBackends(b, func(b *testing.B, dev *device.Device, x *graphs.Exec, s *streams.Stream) {
		ctx := context.Background()
		const round = 100
		var futs [round]*streams.Future
		var issuing, total time.Duration
		for range b.N {
			start := time.Now()
			for i := range futs {
				futs[i] = x.Launch(ctx, s)
			}
			issuing += time.Since(start)
			enqueued, err := actorClock(ctx, dev).Await(ctx)
			require.NoError(b, err)
			total += enqueued.Sub(start)
			for _, f := range futs {
				if _, err := f.Await(ctx); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(issuing.Nanoseconds())/1e3/float64(b.N*round), "caller-us/launch")
		b.ReportMetric(float64(total.Nanoseconds())/1e3/float64(b.N*round), "us/launch")
	})
}

// BenchmarkRound: the bench graph_node row's round (100 launches of a chain of n empty
// kernels), four ways, on the same device, stream and executable graph, to tell what the
// futures and the actor add to a round:
//   - window: at most 64 launches in flight, each future awaited in turn (the row itself);
//   - windowspin: window, the caller polling each future until it is ready instead of
//     parking in Await (what a parked caller's wake-up costs the round);
//   - burst: the 100 launches issued at once, then every future awaited;
//   - actorloop: one message whose function, on the actor thread, calls cudaGraphLaunch 100
//     times and then cudaStreamSynchronize (the C++ baseline's round, no futures).
//
// us/node is the whole round's, on the caller's clock; gpu-us/node the GPU's, between timing
// events recorded before the first launch and after the last; tail-us the time from the actor
// seeing the GPU done (a message that holds the actor until then) to the caller holding every
// future.
func BenchmarkRound(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{1, 10} {
		for _, way := range []string{"window", "windowspin", "burst", "actorloop"} {
			b.Run(fmt.Sprintf("%dB/%s", n, way), func(b *testing.B) {
				testgpu.Need(b, testdev.GPU(), "the cuda backend sees no device")
				dev, x, s := chainBench(b, func() (*device.Device, error) {
					return device.Open(ctx, 0, device.WithBackend(device.BackendCUDA))
				}, n)
				_, err := x.Launch(ctx, s).Await(ctx)
				require.NoError(b, err)
				xh := graphs.HandleOf(x)
				onActor := func(op func(rt backend.Device, h backend.Stream) error) {
					_, err := core.RunOn(ctx, (*core.Stream)(s), func(rt backend.Device, _ *core.Tracker, h backend.Stream) (struct{}, error) {
						return struct{}{}, op(rt, h)
					}).Await(ctx)
					require.NoError(b, err)
				}
				span := newGPUSpan(b, dev, s)
				const round, window = 100, 64
				var futs [round]*streams.Future
				var gpu float64        // s
				var tail time.Duration // from the GPU's end to the caller's return
				b.ResetTimer()
				for range b.N {
					span.mark(0)
					await := func(f *streams.Future) {
						for way == "windowspin" && !f.Ready() {
						}
						_, err := f.Await(ctx)
						require.NoError(b, err)
					}
					switch way {
					case "window", "windowspin":
						for i := range futs {
							if i >= window {
								await(futs[i-window])
							}
							futs[i] = x.Launch(ctx, s)
						}
					case "burst":
						for i := range futs {
							futs[i] = x.Launch(ctx, s)
						}
					case "actorloop":
						onActor(func(rt backend.Device, h backend.Stream) error {
							for range round {
								if err := rt.GraphLaunch(xh, h); err != nil {
									return err
								}
							}
							if err := rt.EventRecord(span.ev[1], h); err != nil {
								return err
							}
							return rt.StreamSynchronize(h)
						})
					}
					if way != "actorloop" {
						span.mark(1)
						// Blocks the actor until the GPU is done, so the futures complete after it.
						end := core.RunOn(ctx, (*core.Stream)(s), func(rt backend.Device, _ *core.Tracker, _ backend.Stream) (time.Time, error) {
							for {
								if err := rt.EventQuery(span.ev[1]); !errors.Is(err, cudaerr.NotReady) {
									return time.Now(), err
								}
							}
						})
						lo := 0
						if way == "window" || way == "windowspin" {
							lo = round - window
						}
						for _, f := range futs[lo:] {
							await(f)
						}
						done := time.Now()
						gpuEnd, err := end.Await(ctx)
						require.NoError(b, err)
						tail += done.Sub(gpuEnd)
					}
					b.StopTimer()
					gpu += span.seconds(b)
					b.StartTimer()
				}
				nodes := float64(b.N * round * n)
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1e3/nodes, "us/node")
				b.ReportMetric(gpu*1e6/nodes, "gpu-us/node")
				b.ReportMetric(float64(tail.Nanoseconds())/1e3/float64(b.N), "tail-us")
			})
		}
	}
}
