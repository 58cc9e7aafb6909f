// Command saxpy compiles a CUDA C++ kernel at run time and runs y = a*x + y from many
// goroutines at once on one device, each on a stream of its own, checking every element
// against a Go reference. Without a GPU it runs on the simulator. On a GPU it prints
// throughput; on the simulator, whose timing says nothing of a GPU's, only the wall time and
// that its figures are not meaningful. Then PASS or FAIL.
//
//	go run ./examples/saxpy -goroutines 64 -n 1048576
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/examples/internal/sample"
	"github.com/gpuactor/gpuactor/streams"
)

func main() {
	n := flag.Int("n", 1<<20, "elements per goroutine")
	workers := flag.Int("goroutines", 64, "goroutines launching at once")
	rounds := flag.Int("rounds", 10, "launches per goroutine")
	var f sample.Flags
	f.Register()
	flag.Parse()
	sample.Finish(run(os.Stdout, *n, *workers, *rounds, f))
}

func run(out io.Writer, n, workers, rounds int, f sample.Flags) error {
	if n <= 0 || workers <= 0 || rounds <= 0 {
		return fmt.Errorf("-n, -goroutines and -rounds must be positive")
	}
	ctx := context.Background()
	dev, err := device.Open(ctx, f.Ordinal, f.Options()...)
	if err != nil {
		return err
	}
	defer dev.Close()
	sample.Describe(dev)

	k, err := sample.Saxpy(ctx, dev)
	if err != nil {
		return err
	}

	start := time.Now()
	g, gctx := errgroup.WithContext(ctx)
	for w := range workers {
		g.Go(func() error { return worker(gctx, dev, k, w, n, rounds) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	report(out, dev.Backend(), n, workers, rounds, time.Since(start))
	return nil
}

// report prints what the run did and, on a GPU, its throughput: µs per launch and GB/s. On
// the simulator those figures would be the CPU's, so it says so and prints the wall time only.
func report(out io.Writer, backend device.BackendKind, n, workers, rounds int, elapsed time.Duration) {
	launches := workers * rounds
	fmt.Fprintf(out, "%d goroutines × %d launches of %d elements: %v", workers, rounds, n, elapsed.Round(time.Microsecond))
	if backend != device.BackendCUDA {
		fmt.Fprintf(out, " (%s backend: timing not meaningful, no throughput printed)\n", backend)
	} else {
		// Each launch reads x and y and writes y; each goroutine also copies x, y in and y out.
		kernelBytes := float64(launches) * float64(n) * 12
		copyBytes := float64(workers) * float64(n) * 12
		fmt.Fprintf(out, ", %.1f µs per launch, %.2f GB/s kernel traffic, %.2f GB/s copies (end to end, copies included)\n",
			float64(elapsed.Microseconds())/float64(launches), kernelBytes/elapsed.Seconds()/1e9, copyBytes/elapsed.Seconds()/1e9)
	}
	fmt.Fprintf(out, "verified %d elements\n", workers*n)
}

// worker is one goroutine of a service: a stream of its own, typed device buffers in that
// stream's order, pinned host memory from the device's reusable pool (the fast path for data
// copied every request), and every element checked.
func worker(ctx context.Context, dev *device.Device, k *device.Kernel, w, n, rounds int) (err error) {
	s, err := streams.New(ctx, dev)
	if err != nil {
		return err
	}
	defer sample.Keep(&err, func() error { return s.Close(ctx) })
	hx, err := alloc.GetPinned[float32](ctx, dev, n)
	if err != nil {
		return err
	}
	defer sample.Keep(&err, func() error { return hx.Close(ctx) })
	hy, err := alloc.GetPinned[float32](ctx, dev, n)
	if err != nil {
		return err
	}
	defer sample.Keep(&err, func() error { return hy.Close(ctx) })
	x, y := hx.Host(), hy.Host()
	for i := range x {
		x[i] = float32((i*7+w)%1000) / 250
		y[i] = float32((i*13+w)%500) / 100
	}
	want := make([]float32, n)
	a := float32(w%4+1) * 0.5
	for i := range want {
		want[i] = y[i]
		for range rounds {
			want[i] = float32(a*x[i]) + want[i] // float32(): Go may not fuse these either
		}
	}

	dx, _, err := alloc.MallocAsync[float32](ctx, s, n)
	if err != nil {
		return err
	}
	defer sample.Keep(&err, func() error { return dx.Close(ctx) })
	dy, _, err := alloc.MallocAsync[float32](ctx, s, n)
	if err != nil {
		return err
	}
	defer sample.Keep(&err, func() error { return dy.Close(ctx) })
	fs := []actor.Waiter{s.CopyHostToDevice(ctx, dx, hx.HostBuffer), s.CopyHostToDevice(ctx, dy, hy.HostBuffer)}
	cfg := cuda.LaunchConfig{Grid: cuda.Dim(uint32((n + 255) / 256)), Block: cuda.Dim(256)}
	for range rounds {
		fs = append(fs, s.Launch(ctx, k, cfg, int32(n), a, dx, dy))
	}
	fs = append(fs, s.CopyDeviceToHost(ctx, hy.HostBuffer, dy))
	if err := actor.WaitAll(ctx, fs...); err != nil {
		return err
	}
	for i, got := range y {
		if got != want[i] {
			return fmt.Errorf("goroutine %d, element %d: got %v, want %v", w, i, got, want[i])
		}
	}
	return nil
}
