package consumer

import (
	"context"
	"fmt"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/streams"
)

// scaleSource is the kernel a Scaler runs, with its Go twin for the simulator.
const scaleSource = `extern "C" __global__ void scale(float* x, float a, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) x[i] *= a;
}`

var scaleSim = map[string]cuda.SimKernel{"scale": func(c *cuda.KernelCall) error {
	n := int(c.Int32(2))
	x := cuda.SimSlice[float32](c, 0, n)
	for i := range x {
		x[i] *= c.Float32(1)
	}
	return nil
}}

// Scaler multiplies slices of float32 by a factor on one device, from any number of
// goroutines: the shape of a service handler built on gpuactor.
type Scaler struct {
	dev *device.Device
	k   *device.Kernel
}

// NewScaler compiles the kernel on dev.
func NewScaler(ctx context.Context, dev *device.Device) (*Scaler, error) {
	mod, err := dev.Compile(ctx, device.Source{Name: "scale.cu", Code: scaleSource, Sim: scaleSim})
	if err != nil {
		return nil, err
	}
	k, err := mod.Kernel(ctx, "scale")
	if err != nil {
		return nil, err
	}
	return &Scaler{dev: dev, k: k}, nil
}

// Scale multiplies xs by a in place, on a stream of its own, and returns once xs holds the
// result.
func (s *Scaler) Scale(ctx context.Context, xs []float32, a float32) error {
	if len(xs) == 0 {
		return fmt.Errorf("nothing to scale")
	}
	st, err := streams.New(ctx, s.dev)
	if err != nil {
		return err
	}
	defer st.Close(context.WithoutCancel(ctx))
	buf, _, err := alloc.MallocAsync[float32](ctx, st, len(xs))
	if err != nil {
		return err
	}
	defer buf.Close(context.WithoutCancel(ctx))
	cfg := cuda.LaunchConfig{Grid: cuda.Dim(uint32(len(xs)+255) / 256), Block: cuda.Dim(256)}
	return actor.WaitAll(ctx,
		streams.CopyToDevice(ctx, st, buf, xs),
		st.Launch(ctx, s.k, cfg, buf, a, len(xs)),
		streams.CopyFromDevice(ctx, st, xs, buf))
}
