package main

import (
	"time"

	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/streams"
)

// freeScenarios are the rows of a free alone: issue 42 holds the Close of a buffer whose last
// use has completed to what cudaFree costs plus at most 10 µs (the difference is printed
// beside the ratio, see cppDifferences).
func freeScenarios() []scenario {
	return []scenario{
		{name: "free_after_done", unit: "us", size: 1 << 20, run: freeAfterDone},
	}
}

// freesPerRepeat is how many frees one repeat times, as in the C++ row.
const freesPerRepeat = 50

// freeAfterDone: an alloc.Malloc buffer of size bytes, memset on its stream and awaited, then
// CloseOn(ctx, nil).Await timed alone, from the call to the free's completion. The C++ row
// times cudaFree alone after the same cudaMemsetAsync and cudaStreamSynchronize. The figure is
// a repeat's mean per free; the value, the median over repeats.
func freeAfterDone(e *env, size int64, repeat int) (float64, *float64, error) {
	s, err := streams.New(e.ctx, e.dev)
	if err != nil {
		return 0, nil, err
	}
	defer s.Close(e.ctx)
	var samples []float64
	for r := -1; r < repeat; r++ {
		var spent time.Duration
		for range freesPerRepeat {
			b, err := alloc.Malloc[byte](e.ctx, s, int(size))
			if err != nil {
				return 0, nil, err
			}
			if err := s.Memset(e.ctx, b, 0).Wait(e.ctx); err != nil {
				return 0, nil, err
			}
			start := time.Now()
			if _, err := b.CloseOn(e.ctx, nil).Await(e.ctx); err != nil {
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
