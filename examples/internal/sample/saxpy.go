package sample

import (
	"context"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
)

// saxpySource is y = a*x + y over n floats, one thread an element.
const saxpySource = `
extern "C" __global__ void saxpy(int n, float a, const float* __restrict__ x, float* __restrict__ y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
`

// saxpySim is saxpy for the simulator: the same arithmetic, in Go.
var saxpySim = map[string]cuda.SimKernel{
	"saxpy": func(c *cuda.KernelCall) error {
		n := int(c.Int32(0))
		a := c.Float32(1)
		x := cuda.SimSlice[float32](c, 2, n)
		y := cuda.SimSlice[float32](c, 3, n)
		for i := range min(uint64(n), c.Threads()) {
			y[i] = float32(a*x[i]) + y[i] // no fused multiply-add, like the GPU built with --fmad=false
		}
		return nil
	},
}

// Saxpy compiles the saxpy kernel (int n, float a, const float* x, float* y) on dev and
// returns it. Its result is exactly Go's float32(a*x[i]) + y[i]: it is built with
// --fmad=false, because the GPU would otherwise fuse a*x+y into one FMA with a single rounding
// and an exact element-by-element check against Go (which rounds the product and the sum
// separately) would fail by one ulp on some elements.
func Saxpy(ctx context.Context, dev *device.Device) (*device.Kernel, error) {
	mod, err := dev.Compile(ctx, device.Source{Name: "saxpy.cu", Code: saxpySource, Sim: saxpySim},
		device.NVRTCOptions("--fmad=false"))
	if err != nil {
		return nil, err
	}
	return mod.Kernel(ctx, "saxpy")
}
