package streams

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkHostCopy is the host side of a staged upload without the GPU: w goroutines each
// copying whole 4 MiB chunks of a 256 MiB slice into a ring of 12 staging-sized buffers. Its
// GB/s bounds what the staged copies can reach on the machine.
func BenchmarkHostCopy(b *testing.B) {
	const size, chunk, slots = 256 << 20, stagingSlotSize, 12
	src := make([]byte, size)
	for i := range src {
		src[i] = byte(i)
	}
	ring := make([][]byte, slots)
	for i := range ring {
		ring[i] = make([]byte, chunk)
	}
	for _, w := range []int{1, 4, 8, 10, 12} {
		b.Run(fmt.Sprintf("workers=%d", w), func(b *testing.B) {
			b.SetBytes(size)
			for b.Loop() {
				var next atomic.Int64
				var wg sync.WaitGroup
				for range w {
					wg.Go(func() {
						for {
							k := int(next.Add(1) - 1)
							if k*chunk >= size {
								return
							}
							copy(ring[k%slots], src[k*chunk:(k+1)*chunk])
						}
					})
				}
				wg.Wait()
			}
		})
	}
}

// BenchmarkMemmoveRate reports the ring's memmove-rate probe (one goroutine copying a slice
// it has not read before, a staging slot at a time), the filler count it gives, and beside it
// what the probe once measured (a staging slot copied three times between buffers already in
// cache), which took too few fillers on the GPU hosts.
func BenchmarkMemmoveRate(b *testing.B) {
	var probe, cached float64
	for b.Loop() {
		probe = memmoveRate()
		src, dst := make([]byte, stagingSlotSize), make([]byte, stagingSlotSize)
		copy(dst, src)
		best := time.Duration(1 << 62)
		for range 3 {
			start := time.Now()
			copy(dst, src)
			best = min(best, time.Since(start))
		}
		cached = float64(len(src)) / best.Seconds()
	}
	b.ReportMetric(probe/1e9, "probe-GB/s")
	b.ReportMetric(float64(stagingWorkersFor(probe, runtime.GOMAXPROCS(0))), "fillers")
	b.ReportMetric(cached/1e9, "cached-GB/s")
}
