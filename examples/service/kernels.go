package main

import (
	"context"
	"errors"
	"sync"

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

// kernels are one device's compiled kernels.
type kernels struct {
	saxpy, poison *device.Kernel
}

// kernelCache compiles the kernels once per device and hands them to the jobs that run there.
// A device that a restart replaced is a new *device.Device: its kernels are compiled on first
// use, and the replaced device's entry is dropped then.
type kernelCache struct {
	mu   sync.Mutex
	devs map[*device.Device]*kernelEntry
	live func() []*device.Device // the devices in use (Group.Devices), for pruning; nil: no pruning
}

type kernelEntry struct {
	once sync.Once
	k    kernels
	err  error
}

// get returns d's kernels, compiling them on first use (the module comes from the kernel cache
// on disk after the first device).
func (c *kernelCache) get(ctx context.Context, d *device.Device) (kernels, error) {
	c.mu.Lock()
	if c.devs == nil {
		c.devs = map[*device.Device]*kernelEntry{}
	}
	e, ok := c.devs[d]
	if !ok {
		if c.live != nil {
			c.prune(c.live())
		}
		e = &kernelEntry{}
		c.devs[d] = e
	}
	c.mu.Unlock()
	// Not the request's context: the others waiting for this compile must not fail because
	// its request was cancelled. A device that fails fails the compile.
	e.once.Do(func() { e.k, e.err = compile(context.WithoutCancel(ctx), d) })
	if e.err != nil {
		c.mu.Lock()
		if c.devs[d] == e { // compile again next time
			delete(c.devs, d)
		}
		c.mu.Unlock()
	}
	return e.k, e.err
}

// setLive makes get drop the entries of devices live no longer lists.
func (c *kernelCache) setLive(live func() []*device.Device) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.live = live
}

// prune drops the entries of devices not in live: those a restart replaced.
func (c *kernelCache) prune(live []*device.Device) {
	keep := make(map[*device.Device]bool, len(live))
	for _, d := range live {
		keep[d] = true
	}
	for d := range c.devs {
		if !keep[d] {
			delete(c.devs, d)
		}
	}
}

// compile builds the module on d. --fmad=false keeps a*x+y two roundings, as Go computes it,
// so that the load generator's exact element-by-element check holds on a GPU.
func compile(ctx context.Context, d *device.Device) (kernels, error) {
	mod, err := d.Compile(ctx, device.Source{Name: "service.cu", Code: source, Sim: simKernels}, device.NVRTCOptions("--fmad=false"))
	if err != nil {
		return kernels{}, err
	}
	var k kernels
	if k.saxpy, err = mod.Kernel(ctx, "saxpy"); err != nil {
		return kernels{}, err
	}
	if k.poison, err = mod.Kernel(ctx, "poison"); err != nil {
		return kernels{}, err
	}
	return k, nil
}
