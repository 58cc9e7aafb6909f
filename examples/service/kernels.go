package main

import (
	"context"
	"errors"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
)

// source is the service's CUDA code: saxpy, the work, and poison, the fault -fault poison
// injects: a trap, which fails the GPU's context for good (a sticky launch failure).
const source = `
extern "C" __global__ void saxpy(int n, float a, const float* __restrict__ x, const float* __restrict__ y, float* __restrict__ out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a * x[i] + y[i];
}

extern "C" __global__ void poison() { __trap(); }
`

// simKernels are the kernels for the simulator: the same arithmetic, in Go. An isolated
// device's worker runs them by name (isolate.WithKernels in main).
var simKernels = map[string]cuda.SimKernel{
	"saxpy": func(c *cuda.KernelCall) error {
		n := int(c.Int32(0))
		a := c.Float32(1)
		x := cuda.SimSlice[float32](c, 2, n)
		y := cuda.SimSlice[float32](c, 3, n)
		out := cuda.SimSlice[float32](c, 4, n)
		for i := range min(uint64(n), c.Threads()) {
			out[i] = float32(a*x[i]) + y[i] // no fused multiply-add, like the GPU built with --fmad=false
		}
		return nil
	},
	"poison": func(*cuda.KernelCall) error {
		return errors.New("poison: trap") // a device fault, sticky as on a GPU
	},
}

// newProgram is the service's device code: compiled once per architecture and loaded on
// whichever device asks for a kernel (device.Program), a device a restart brought back
// included. --fmad=false keeps a*x+y two roundings, as Go computes it, so that the load
// generator's exact element-by-element check holds on a GPU.
func newProgram() *device.Program {
	return device.NewProgram(device.Source{Name: "service.cu", Code: source, Sim: simKernels}, device.NVRTCOptions("--fmad=false"))
}

// kernels are the service's kernels on one device.
type kernels struct {
	saxpy, poison *device.Kernel
}

// kernelsOn returns prog's kernels on d, loading them there on first use.
func kernelsOn(ctx context.Context, prog *device.Program, d *device.Device) (kernels, error) {
	var k kernels
	var err error
	if k.saxpy, err = prog.Kernel(ctx, d, "saxpy"); err != nil {
		return kernels{}, err
	}
	if k.poison, err = prog.Kernel(ctx, d, "poison"); err != nil {
		return kernels{}, err
	}
	return k, nil
}
