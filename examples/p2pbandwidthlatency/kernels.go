package main

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/examples/internal/sample"
)

// delayClocks is the delay kernel's timeout, the C sample's default argument: the GPU clocks
// it waits for the host's flag before it lets the stream go on regardless.
const delayClocks = 10000000

// source is the sample's two kernels. delay holds its stream until the host sets the flag
// (pinned host memory the GPU reads through its mapping; volatile, so every iteration loads
// it again) or until timeout_clocks have passed. copyp2p is the SM-initiated copy of
// --sm_copy, 16 bytes a thread per iteration. The C sample gives timeout_clocks a default
// value; a launch passes every argument anyway, so it is dropped here.
const source = `
extern "C" __global__ void delay(volatile int *flag, unsigned long long timeout_clocks)
{
    // Hold the stream until the host sets the flag, or until the timeout passes.
    long long int start_clock, sample_clock;
    start_clock = clock64();

    while (!*flag) {
        sample_clock = clock64();

        if (sample_clock - start_clock > timeout_clocks) {
            break;
        }
    }
}

// A grid-stride copy, 16 bytes a thread per step.
extern "C" __global__ void copyp2p(int4 *__restrict__ dest, int4 const *__restrict__ src, size_t num_elems)
{
    size_t globalId = blockIdx.x * blockDim.x + threadIdx.x;
    size_t gridSize = blockDim.x * gridDim.x;

#pragma unroll(5)
    for (size_t i = globalId; i < num_elems; i += gridSize) {
        dest[i] = src[i];
    }
}
`

// simKernels are the kernels for the simulator, on a device whose clock runs at clockKHz:
// delay polls the flag (atomic loads, the Go form of the volatile ones) until the host
// sets it or the timeout, counted in that clock's cycles, passes; copyp2p copies num_elems
// 16-byte elements, between two devices where peer access is enabled, as the simulator
// allows a kernel only then.
func simKernels(views *sample.HostViews[int32], clockKHz int) map[string]cuda.SimKernel {
	if clockKHz <= 0 {
		clockKHz = 1_000_000 // a device that reports no clock: count 1 GHz
	}
	return map[string]cuda.SimKernel{
		"delay": func(c *cuda.KernelCall) error {
			flag := &views.Slice(c, 0, 1)[0]
			timeout := time.Duration(float64(c.Uint64(1)) / float64(clockKHz) * float64(time.Millisecond))
			start := time.Now()
			// Polled with short sleeps rather than spun: a spinning goroutine would take a CPU
			// from the actors queueing the work it waits for.
			for atomic.LoadInt32(flag) == 0 && time.Since(start) <= timeout {
				time.Sleep(20 * time.Microsecond)
			}
			return nil
		},
		"copyp2p": func(c *cuda.KernelCall) error {
			n := int(c.Uint64(2))
			copy(cuda.SimSlice[[4]int32](c, 0, n), cuda.SimSlice[[4]int32](c, 1, n))
			return nil
		},
	}
}

// kernels are the sample's kernels loaded on one device, with the launch shape of copyp2p.
type kernels struct {
	mod            *device.Module
	delay, copyp2p *device.Kernel
	blocks         uint32
	threads        uint32
}

// loadKernels compiles the source on d (a module belongs to one device).
func loadKernels(ctx context.Context, d *device.Device, views *sample.HostViews[int32]) (kernels, error) {
	p := d.Properties()
	mod, err := d.Compile(ctx, device.Source{Name: "p2pbandwidthlatency.cu", Code: source, Sim: simKernels(views, p.ClockKHz)})
	if err != nil {
		return kernels{}, err
	}
	k := kernels{mod: mod}
	if k.delay, err = mod.Kernel(ctx, "delay"); err == nil {
		k.copyp2p, err = mod.Kernel(ctx, "copyp2p")
	}
	if err != nil {
		return kernels{}, errors.Join(err, mod.Close(ctx))
	}
	k.blocks, k.threads = copyShape(p)
	return k, nil
}

// copyShape is what cudaOccupancyMaxPotentialBlockSize answers for copyp2p, which the C
// sample launches with: the largest block size (a multiple of the warp) that keeps the most
// threads resident on a multiprocessor, and enough blocks to fill every multiprocessor with
// them. The calculator also weighs the kernel's registers and shared memory; copyp2p needs no
// shared memory and few registers (16 on sm_90), too few to limit any block size, so the
// threads a multiprocessor holds decide.
func copyShape(p device.Properties) (blocks, threads uint32) {
	warp := max(p.WarpSize, 1)
	best, perSM, size := 0, 1, max(p.MaxThreadsPerBlock, 1)
	for bs := p.MaxThreadsPerBlock / warp * warp; bs > 0; bs -= warp {
		n := p.MaxThreadsPerSM / bs
		if n*bs > best {
			best, perSM, size = n*bs, n, bs
		}
		if best >= p.MaxThreadsPerSM {
			break
		}
	}
	return uint32(max(perSM, 1) * max(p.MultiProcessors, 1)), uint32(size)
}
