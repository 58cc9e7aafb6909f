package device_test

import (
	"context"
	"fmt"

	"github.com/gpuactor/gpuactor/device"
)

func saxpyWorker(ctx context.Context, dev *device.Device, k *device.Kernel, w, n, rounds int) error {
	x, y := make([]float32, n), make([]float32, n)
	for i := range x {
		x[i], y[i] = float32(w+i%31), float32(i%7)
	}
	dx, err := dev.Malloc(ctx, uint64(4*n))
	if err != nil {
		return err
	}
	defer dx.Free(ctx)
	dy, err := dev.Malloc(ctx, uint64(4*n))
	if err != nil {
		return err
	}
	defer dy.Free(ctx)
	if err := device.CopyToDevice(ctx, dx, x); err != nil {
		return err
	}
	if err := device.CopyToDevice(ctx, dy, y); err != nil {
		return err
	}
	a := float32(w%5 + 1)
	cfg := device.Config{Grid: device.Dim(uint32(n+127) / 128), Block: device.Dim(128)}
	for range rounds {
		if err := dev.Launch(ctx, k, cfg, int32(n), a, dx, dy); err != nil {
			return err
		}
	}
	out := make([]float32, n)
	if err := device.CopyFromDevice(ctx, out, dy); err != nil {
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
