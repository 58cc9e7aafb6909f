package device_test

import (
	"context"
	"fmt"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/streams"
)

// saxpyWorker is one goroutine of a service: its own stream, its own buffers, rounds of saxpy
// and every element checked.
func saxpyWorker(ctx context.Context, dev *device.Device, k *device.Kernel, w, n, rounds int) error {
	x, y := make([]float32, n), make([]float32, n)
	for i := range x {
		x[i], y[i] = float32(w+i%31), float32(i%7)
	}
	s, err := streams.New(ctx, dev)
	if err != nil {
		return err
	}
	defer s.Close(ctx)
	dx, err := dev.MallocBytes(ctx, uint64(4*n))
	if err != nil {
		return err
	}
	defer dx.Close(ctx)
	dy, err := dev.MallocBytes(ctx, uint64(4*n))
	if err != nil {
		return err
	}
	defer dy.Close(ctx)
	fs := []actor.Waiter{streams.CopyToDevice(ctx, s, dx, x), streams.CopyToDevice(ctx, s, dy, y)}
	a := float32(w%5 + 1)
	cfg := cuda.LaunchConfig{Grid: cuda.Dim(uint32(n+127) / 128), Block: cuda.Dim(128)}
	for range rounds {
		fs = append(fs, s.Launch(ctx, k, cfg, int32(n), a, dx, dy))
	}
	out := make([]float32, n)
	fs = append(fs, streams.CopyFromDevice(ctx, s, out, dy))
	if err := actor.WaitAll(ctx, fs...); err != nil {
		return err
	}
	for i := range out {
		want := y[i]
		for range rounds {
			want = float32(a*x[i]) + want
		}
		if out[i] != want {
			return fmt.Errorf("worker %d element %d: got %v want %v", w, i, out[i], want)
		}
	}
	return nil
}
