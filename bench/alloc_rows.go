package main

import (
	"time"

	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/streams"
)

// allocScenarios are the rows of alloc/: a stream-ordered allocation and its free (against
// C++ cudaMallocAsync + cudaFreeAsync on one stream) and a typed cudaMalloc + cudaFree pair
// (against C++ malloc_free). The target is ≤ 1.1× C++.
func allocScenarios() []scenario {
	return []scenario{
		{name: "mallocasync_free_pair", unit: "us/pair", size: 1 << 20, ref: "mallocasync_free", run: func(e *env, size int64, r int) (float64, *float64, error) {
			return mallocAsyncPairs(e, size, 1, r)
		}},
		{name: "mallocasync_free_pair_8", manyStreams: true, unit: "us/pair", size: 1 << 20, ref: "mallocasync_free", run: func(e *env, size int64, r int) (float64, *float64, error) {
			return mallocAsyncPairs(e, size, 8, r)
		}},
		{name: "malloc_free_pair", unit: "us/pair", size: 1 << 20, ref: "malloc_free", run: typedMallocFree},
	}
}

// allocPairs is how many pairs one repeat times, as in the C++ rows.
const allocPairs = 200

// mallocAsyncPairs: g goroutines, each with a stream of its own, queue MallocAsync + FreeAsync
// pairs of size bytes from the default pool without waiting for the frees' futures; each
// repeat ends when every stream has synchronized. Per-pair time is the batch time / pairs.
func mallocAsyncPairs(e *env, size int64, g, repeat int) (float64, *float64, error) {
	ss := make([]*streams.Stream, g)
	for i := range ss {
		s, err := streams.New(e.ctx, e.dev)
		if err != nil {
			return 0, nil, err
		}
		defer s.Close(e.ctx)
		ss[i] = s
	}
	n := int(size)
	var samples []float64
	for r := -1; r < repeat; r++ {
		start := time.Now()
		if err := fanOut(g, func(i int) error {
			var last *streams.Future
			for range allocPairs {
				b, _, err := alloc.MallocAsync[byte](e.ctx, ss[i], n)
				if err != nil {
					return err
				}
				last = b.CloseOn(e.ctx, ss[i])
			}
			_, err := last.Await(e.ctx)
			return err
		}); err != nil {
			return 0, nil, err
		}
		if r >= 0 {
			samples = append(samples, float64(time.Since(start).Nanoseconds())/1e3/float64(allocPairs*g))
		}
	}
	return median(samples), nil, nil
}

// typedMallocFree: alloc.Malloc + Free (cudaMalloc + cudaFree through a typed buffer) pairs.
// Free returns once the free is queued (the next Malloc runs after it), so the repeat ends by
// awaiting the last free, as the C++ loop ends with its last cudaFree done.
func typedMallocFree(e *env, size int64, repeat int) (float64, *float64, error) {
	s, err := streams.New(e.ctx, e.dev)
	if err != nil {
		return 0, nil, err
	}
	defer s.Close(e.ctx)
	var samples []float64
	for r := -1; r < repeat; r++ {
		start := time.Now()
		for i := range allocPairs {
			b, err := alloc.Malloc[byte](e.ctx, s, int(size))
			if err != nil {
				return 0, nil, err
			}
			if i == allocPairs-1 {
				if _, err := b.CloseOn(e.ctx, nil).Await(e.ctx); err != nil {
					return 0, nil, err
				}
			} else if err := b.Close(e.ctx); err != nil {
				return 0, nil, err
			}
		}
		if r >= 0 {
			samples = append(samples, float64(time.Since(start).Nanoseconds())/1e3/allocPairs)
		}
	}
	return median(samples), nil, nil
}
