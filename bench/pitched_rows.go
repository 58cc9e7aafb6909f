package main

import (
	"math"
	"time"
	"unsafe"

	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/streams"
)

// pitchedScenarios are the rows of pitched memory: a device-to-device copy of a whole square
// float32 array of size bytes between two pitched allocations (one cudaMemcpy2DAsync each),
// against C++ d2d_pitched. The target is ≥ 0.97× C++'s bandwidth.
func pitchedScenarios() []scenario {
	return []scenario{
		{name: "d2d_pitched", unit: "GB/s", size: 8192 * 8192 * 4, run: pitchedBandwidth},
	}
}

// pitchedBandwidth times iters whole-array CopyPitched calls of a side×side float32 array, in
// bytes read plus written per second, and checks the destination afterwards.
func pitchedBandwidth(e *env, size int64, repeat int) (float64, *float64, error) {
	side := int(math.Sqrt(float64(size / 4)))
	a, err := alloc.MallocPitch[float32](e.ctx, e.dev, side, side)
	if err != nil {
		return 0, nil, err
	}
	defer a.Close(e.ctx)
	b, err := alloc.MallocPitch[float32](e.ctx, e.dev, side, side)
	if err != nil {
		return 0, nil, err
	}
	defer b.Close(e.ctx)
	want := make([]float32, side*side)
	for i := range want {
		want[i] = float32(i % 1000003)
	}
	s := streams.Default(e.dev)
	if err := alloc.CopyToPitched(e.ctx, s, a, a.Whole(), want).Wait(e.ctx); err != nil {
		return 0, nil, err
	}
	const iters = 10
	bytes := float64(side) * float64(side) * 4
	var samples []float64
	for r := -1; r < repeat; r++ {
		start := time.Now()
		for range iters {
			alloc.CopyPitched(e.ctx, s, b, alloc.Pos{}, a, a.Whole())
		}
		if err := e.dev.Synchronize(e.ctx); err != nil {
			return 0, nil, err
		}
		if r >= 0 {
			samples = append(samples, 2*bytes*iters/time.Since(start).Seconds()/1e9)
		}
	}
	got := make([]float32, side*side)
	if err := alloc.CopyFromPitched(e.ctx, s, got, b, b.Whole()).Wait(e.ctx); err != nil {
		return 0, nil, err
	}
	return median(samples), nil, checkBytes(bytesOfFloats(got), bytesOfFloats(want))
}

// bytesOfFloats views xs as its bytes, for checkBytes.
func bytesOfFloats(xs []float32) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(xs))), 4*len(xs))
}
