package main

import (
	"time"

	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/streams"
)

// freeScenarios are the rows of a free alone: issue 42 holds the Close of a buffer whose last
// use has completed to what cudaFree costs plus at most 10 µs (the difference is printed
// beside the ratio, see cppDifferences).
func freeScenarios() []scenario {
	return []scenario{
		{name: "free_after_done", unit: "us", size: 1 << 20, run: func(e *env, size int64, r int) (float64, *float64, error) {
			return freeAfterDone(e, size, r, false)
		}},
		// device.Buffer.Close, as simpleMultiGPU frees: after the work on every stream of the
		// device (Tracker.AfterAll), and returning once freed.
		{name: "free_after_done_device", unit: "us", size: 1 << 20, ref: "free_after_done", run: func(e *env, size int64, r int) (float64, *float64, error) {
			return freeAfterDone(e, size, r, true)
		}},
	}
}

// freesPerRepeat is how many frees one repeat times, as in the C++ row.
const freesPerRepeat = 50

// freeAfterDone: an alloc.Malloc buffer of size bytes, memset on its stream and awaited, then
// CloseOn(ctx, nil).Await timed alone, from the call to the free's completion. The C++ row
// times cudaFree alone after the same cudaMemsetAsync and cudaStreamSynchronize. The figure is
// a repeat's mean per free; the value, the median over repeats. With untyped, the buffer is
// Device.MallocBytes's and the free its Close.
func freeAfterDone(e *env, size int64, repeat int, untyped bool) (float64, *float64, error) {
	s, err := streams.New(e.ctx, e.dev)
	if err != nil {
		return 0, nil, err
	}
	defer s.Close(e.ctx)
	var samples []float64
	for r := -1; r < repeat; r++ {
		var spent time.Duration
		for range freesPerRepeat {
			var use device.Mem
			var free func() error
			if untyped {
				b, err := e.dev.MallocBytes(e.ctx, uint64(size))
				if err != nil {
					return 0, nil, err
				}
				use, free = b, func() error { return b.Close(e.ctx) }
			} else {
				b, err := alloc.Malloc[byte](e.ctx, s, int(size))
				if err != nil {
					return 0, nil, err
				}
				use, free = b, func() error { return b.CloseOn(e.ctx, nil).Wait(e.ctx) }
			}
			if err := s.Memset(e.ctx, use, 0).Wait(e.ctx); err != nil {
				return 0, nil, err
			}
			start := time.Now()
			if err := free(); err != nil {
				return 0, nil, err
			}
			spent += time.Since(start)
		}
		if r >= 0 {
			samples = append(samples, float64(spent.Nanoseconds())/1e3/freesPerRepeat)
		}
	}
	return median(samples), nil, nil
}
