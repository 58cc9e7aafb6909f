package streams

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
)

// BenchmarkStagedUploadGrid times 256 MiB staged uploads through rings of several geometries
// (slot size and filler count, with the default stagingSpare), beside a pinned upload of the
// same size and the fillers' host copies alone, all in one process: the figures to tune the
// ring by on a GPU host. med-GB/s is the median copy's rate.
func BenchmarkStagedUploadGrid(b *testing.B) {
	ctx, dev, buf, src := gridSetup(b)
	pinned, err := dev.MallocPinnedBytes(ctx, gridSize)
	require.NoError(b, err)
	const n = gridSize
	b.Run("pinned", func(b *testing.B) {
		s, err := New(ctx, dev)
		require.NoError(b, err)
		defer s.Close(ctx)
		b.SetBytes(n)
		timedCopies(b, n, func() *Future { return s.CopyHostToDevice(ctx, buf, pinned) })
	})
	b.Run("hostcopy", func(b *testing.B) {
		// The fillers' copies alone, 8 goroutines into 8 pinned slots, with no DMA beside them.
		const w = 8
		ring := make([][]byte, w)
		for i := range ring {
			ring[i] = pinned.Host()[i*stagingSlotSize : (i+1)*stagingSlotSize]
		}
		b.SetBytes(n)
		for b.Loop() {
			copyChunks(ring, src, w)
		}
	})
	for _, slot := range []int{2 << 20, stagingSlotSize} {
		for _, w := range []int{6, 7, 8, 10} {
			b.Run(fmt.Sprintf("slot=%dM/fillers=%d", slot>>20, w), func(b *testing.B) {
				s, err := New(ctx, dev)
				require.NoError(b, err)
				defer s.Close(ctx)
				stagingRing(s, stagingParams{slots: w + stagingSpare, slotSize: slot, workers: w, downWorkers: w})
				b.SetBytes(n)
				timedCopies(b, n, func() *Future { return CopyToDevice(ctx, s, buf, src) })
			})
		}
	}
	// The device buffer holds the last upload.
	got := make([]byte, n)
	testdev.Read(b, ctx, got, buf)
	require.Equal(b, src, got)
}

// timedCopies runs copy (of size bytes) b.N times, awaiting each, and reports the median
// copy's GB/s.
func timedCopies(b *testing.B, size int, copy func() *Future) {
	var each []float64
	for b.Loop() {
		start := time.Now()
		require.NoError(b, copy().Wait(context.Background()))
		each = append(each, float64(size)/float64(time.Since(start))) // bytes per ns: GB/s
	}
	slices.Sort(each)
	b.ReportMetric(each[len(each)/2], "med-GB/s")
	b.ReportMetric(each[len(each)/10], "p10-GB/s")
}

// BenchmarkStagedDownloadGrid times 256 MiB staged downloads through rings of several
// geometries (copy-out workers, slots beyond them, slot size), three rounds of each in turn,
// in one process: whether the link runs short of queued chunks (more slots would help) or the
// copy-outs of memory the DMA wrote miss the cache (fewer or smaller ones would). med-GB/s is
// the median copy's rate, p10-GB/s the tenth percentile's.
func BenchmarkStagedDownloadGrid(b *testing.B) {
	ctx, dev, buf, want := gridSetup(b)
	testdev.Write(b, ctx, buf, want)
	const n = gridSize
	dst := make([]byte, n)
	for round := range 3 {
		for _, g := range []struct{ workers, spare, slot int }{{14, 8, 4 << 20}, {14, 4, 4 << 20}, {14, 8, 2 << 20}, {14, 16, 2 << 20}, {14, 8, 1 << 20}, {16, 8, 2 << 20}} {
			b.Run(fmt.Sprintf("round=%d/workers=%d/spare=%d/slot=%dK", round, g.workers, g.spare, g.slot>>10), func(b *testing.B) {
				s, err := New(ctx, dev)
				require.NoError(b, err)
				defer s.Close(ctx)
				stagingRing(s, stagingParams{slots: g.workers + g.spare, slotSize: g.slot, workers: g.workers, downWorkers: g.workers})
				b.SetBytes(n)
				clear(dst)
				timedCopies(b, n, func() *Future { return CopyFromDevice(ctx, s, dst, buf) })
				require.True(b, bytes.Equal(want, dst), "the download landed other bytes")
			})
		}
	}
}

// gridSize is the grid benchmarks' copy size.
const gridSize = 256 << 20

// gridSetup opens the GPU (skipping without one; closed when b ends) and returns a device
// buffer of gridSize bytes and a Go slice of as many holding a byte pattern.
func gridSetup(b *testing.B) (context.Context, *device.Device, *device.Buffer, []byte) {
	if !testdev.GPU() {
		b.Skip("needs a GPU")
	}
	ctx := context.Background()
	dev, err := device.Open(ctx, 0, device.WithBackend(device.BackendCUDA))
	require.NoError(b, err)
	b.Cleanup(func() { require.NoError(b, dev.Close()) })
	buf, err := dev.MallocBytes(ctx, gridSize)
	require.NoError(b, err)
	host := make([]byte, gridSize)
	for i := range host {
		host[i] = byte(i*131 + 7)
	}
	return ctx, dev, buf, host
}

// BenchmarkStagedMidSizes times staged copies of 64 KiB to 4 MiB, each way, with the smallest
// chunk a copy is cut into at 64 KiB, 256 KiB and 1 MiB (stagingMinChunk): whether cutting
// these copies finer, so that host copies overlap the link, pays for the chunks' fixed costs.
// med-GB/s is the median copy's rate.
// BenchmarkStagedInlineDownloads compares copying single-chunk downloads out of staging on
// the actor thread (inline) with handing them to a copy-out goroutine.
func BenchmarkStagedInlineDownloads(b *testing.B) {
	ctx, dev, buf, src := gridSetup(b)
	for _, size := range []int{64 << 10, 256 << 10, 1 << 20} {
		for _, inline := range []int{64 << 10, 256 << 10, 1 << 20} {
			b.Run(fmt.Sprintf("size=%dK/inline=%dK", size>>10, inline>>10), func(b *testing.B) {
				s, err := New(ctx, dev)
				require.NoError(b, err)
				defer s.Close(ctx)
				p := stagingParamsFor(0)
				p.inlineMax = inline
				stagingRing(s, p)
				host := slices.Clone(src[:size])
				b.SetBytes(int64(size))
				timedCopies(b, size, func() *Future { return CopyFromDevice(ctx, s, host, buf) })
			})
		}
	}
}

func BenchmarkStagedMidSizes(b *testing.B) {
	ctx, dev, buf, src := gridSetup(b)
	for _, size := range []int{64 << 10, 256 << 10, 1 << 20, 4 << 20} {
		for _, minChunk := range []int{64 << 10, 256 << 10, 1 << 20} {
			for _, up := range []bool{true, false} {
				dir := map[bool]string{true: "up", false: "down"}[up]
				b.Run(fmt.Sprintf("size=%dK/min=%dK/%s", size>>10, minChunk>>10, dir), func(b *testing.B) {
					s, err := New(ctx, dev)
					require.NoError(b, err)
					defer s.Close(ctx)
					p := stagingParamsFor(0)
					p.minChunk = minChunk
					stagingRing(s, p)
					host := slices.Clone(src[:size])
					b.SetBytes(int64(size))
					if up {
						timedCopies(b, size, func() *Future { return CopyToDevice(ctx, s, buf, host) })
						return
					}
					timedCopies(b, size, func() *Future { return CopyFromDevice(ctx, s, host, buf) })
				})
			}
		}
	}
}
