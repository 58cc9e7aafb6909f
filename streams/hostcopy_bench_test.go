package streams

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
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
				copyChunks(ring, src, w)
			}
		})
	}
}

// copyChunks copies src, a chunk the size of ring's slots at a time, into ring's slots in
// turn, on w goroutines that each take the next chunk: the fillers' host copies without the
// GPU. src holds a whole number of chunks.
func copyChunks(ring [][]byte, src []byte, w int) {
	chunk := len(ring[0])
	var next atomic.Int64
	var wg sync.WaitGroup
	for range w {
		wg.Go(func() {
			for k := int(next.Add(1) - 1); k*chunk < len(src); k = int(next.Add(1) - 1) {
				copy(ring[k%len(ring)], src[k*chunk:(k+1)*chunk])
			}
		})
	}
	wg.Wait()
}

// BenchmarkMemmoveRate reports the ring's memmove-rate probe (one goroutine copying a slice
// it has not read before, a staging slot at a time) and the filler count it gives the host.
func BenchmarkMemmoveRate(b *testing.B) {
	var probe float64
	for b.Loop() {
		probe = memmoveRate()
	}
	b.ReportMetric(probe/1e9, "probe-GB/s")
	b.ReportMetric(float64(stagingWorkersFor(probe, runtime.GOMAXPROCS(0))), "fillers")
}
