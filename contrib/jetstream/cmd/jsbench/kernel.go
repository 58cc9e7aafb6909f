package main

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/streams"
)

// A job is GPU-bound: its message carries 4 bytes (the job's number), the device zeroes n
// elements and mixes each for a number of rounds, and 256 bytes come back (the first 64
// elements), which the client checks against mix on the host.
const resultElems = 64

// mix is the kernel's arithmetic on one element; wrapping uint32 arithmetic is the same in
// CUDA C++ and in Go, so the results must be equal bit for bit.
func mix(v, key, rounds uint32) uint32 {
	for r := range rounds {
		v ^= key + r
		v *= 0x9E3779B1
		v ^= v >> 15
	}
	return v
}

func jobKey(idx uint32) uint32 { return idx*0xC2B2AE35 + 0x27D4EB2F }

var source = device.Source{
	Name: "jsbench.cu",
	Code: `
extern "C" __global__ void mix(unsigned int* x, unsigned int n, unsigned int key, unsigned int rounds) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned int v = x[i];
    for (unsigned int r = 0; r < rounds; r++) {
        v ^= key + r;
        v *= 0x9E3779B1u;
        v ^= v >> 15;
    }
    x[i] = v;
}
`,
	Sim: map[string]cuda.SimKernel{
		"mix": func(c *cuda.KernelCall) error {
			n := int(c.Uint32(1))
			key, rounds := c.Uint32(2), c.Uint32(3)
			x := cuda.SimSlice[uint32](c, 0, n)
			for i := range min(uint64(n), c.Threads()) {
				x[i] = mix(x[i], key, rounds)
			}
			return nil
		},
	},
}

// runMix runs job idx on stream s and returns its first elements as bytes.
func runMix(ctx context.Context, prog *device.Program, d *device.Device, s *streams.Stream, idx uint32, n, rounds int) ([]byte, error) {
	k, err := prog.Kernel(ctx, d, "mix")
	if err != nil {
		return nil, err
	}
	buf, _, err := alloc.MallocAsync[uint32](ctx, s, n)
	if err != nil {
		return nil, err
	}
	defer buf.Close(context.WithoutCancel(ctx))
	got := make([]uint32, resultElems)
	cfg := cuda.LaunchConfig{Grid: cuda.Dim(uint32((n + 255) / 256)), Block: cuda.Dim(256)}
	s.Memset(ctx, buf, 0)
	s.Launch(ctx, k, cfg, buf, uint32(n), jobKey(idx), uint32(rounds))
	if err := streams.CopyFromDevice(ctx, s, got, buf.Elems(0, resultElems)).Wait(ctx); err != nil {
		return nil, fmt.Errorf("job %d: %w", idx, err)
	}
	out := make([]byte, 4*resultElems)
	for i, v := range got {
		binary.LittleEndian.PutUint32(out[4*i:], v)
	}
	return out, nil
}

// check says whether out is job idx's result.
func check(idx uint32, rounds int, out []byte) error {
	if len(out) != 4*resultElems {
		return fmt.Errorf("job %d: result of %d bytes, want %d", idx, len(out), 4*resultElems)
	}
	want := mix(0, jobKey(idx), uint32(rounds))
	for i := range resultElems {
		if got := binary.LittleEndian.Uint32(out[4*i:]); got != want {
			return fmt.Errorf("job %d, element %d: got %#x, want %#x", idx, i, got, want)
		}
	}
	return nil
}
