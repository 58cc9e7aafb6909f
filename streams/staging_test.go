package streams

// Internal tests (package streams, unlike the rest of the package's tests): they look at the
// staging ring itself (its chunking, its memory after Close). Their helpers are named
// staging* so that they cannot clash with other test files.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/core"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/internal/testgpu"
	"github.com/gpuactor/gpuactor/internal/testleak"
	"github.com/gpuactor/gpuactor/sim"
)

// stagingBackends runs fn on the simulator and on the GPU (skipped without one, failed
// without one when GPUACTOR_REQUIRE_GPU=1), with the options that open a device there.
func stagingBackends(t *testing.T, fn func(t *testing.T, opts []device.Option)) {
	t.Run("sim", func(t *testing.T) {
		fn(t, []device.Option{device.WithSimulator(sim.New()), device.WithKernelCache(t.TempDir())})
	})
	t.Run("cuda", func(t *testing.T) {
		n, err := device.Count(context.Background(), device.WithBackend(device.BackendCUDA))
		testgpu.Need(t, err == nil && n > 0, "the cuda backend sees no device")
		fn(t, []device.Option{device.WithBackend(device.BackendCUDA), device.WithKernelCache(t.TempDir())})
	})
}

func stagingOpen(t *testing.T, opts []device.Option) *device.Device {
	t.Helper()
	dev, err := device.Open(testdev.Ctx(t), 0, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, dev.Close()) })
	return dev
}

func stagingStream(t *testing.T, dev *device.Device) *Stream {
	t.Helper()
	s, err := New(testdev.Ctx(t), dev)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	return s
}

func stagingMalloc(t *testing.T, dev *device.Device, n int) *device.Buffer {
	t.Helper()
	b, err := dev.MallocBytes(testdev.Ctx(t), uint64(n))
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close(context.Background()) })
	return b
}

// stagingPattern is n bytes that depend on their index and seed and are never zero: a
// 4099-byte block (a prime length, aligned with no chunk) repeated, with each 4 KiB page's
// first bytes stamped with its index, so that a misplaced page or chunk shows. Built by
// doubling copies: a byte loop over 64 MiB is slow under -race.
func stagingPattern(n, seed int) []byte {
	b := make([]byte, n)
	for i := range min(n, 4099) {
		b[i] = byte(i*131+i>>9+seed) | 1
	}
	for done := min(n, 4099); done < n; {
		done += copy(b[done:], b[:min(done, 1<<20)-(min(done, 1<<20)%4099)])
	}
	for page := 0; page+4 <= n; page += 4096 {
		v := uint32(page/4096 + seed)
		b[page], b[page+1], b[page+2], b[page+3] = byte(v)|1, byte(v>>7)|1, byte(v>>14)|1, byte(v>>21)|1
	}
	return b
}

// stagingEqual compares byte for byte, reporting the first difference (not a 64 MiB diff).
func stagingEqual(t *testing.T, want, got []byte, msg string) {
	t.Helper()
	require.Equal(t, len(want), len(got), msg)
	if !bytes.Equal(want, got) {
		for i := range want {
			if want[i] != got[i] {
				require.Failf(t, "bytes differ", "%s: byte %d of %d is %#x, want %#x", msg, i, len(want), got[i], want[i])
			}
		}
	}
}

// stagingAwait waits for f and requires it to succeed.
func stagingAwait(t *testing.T, f *Future) {
	t.Helper()
	require.NoError(t, f.Wait(testdev.Ctx(t)))
}

// stagingRoundTrip uploads and downloads n bytes through s and checks them.
func stagingRoundTrip(t *testing.T, s *Stream, n, seed int) {
	t.Helper()
	require.NoError(t, stagingTrip(testdev.Ctx(t), s, n, seed))
}

// stagingTrip is stagingRoundTrip for other goroutines than the test's: it returns what went
// wrong.
func stagingTrip(ctx context.Context, s *Stream, n, seed int) error {
	buf, err := s.Device().MallocBytes(ctx, uint64(n))
	if err != nil {
		return err
	}
	defer buf.Close(ctx)
	src := stagingPattern(n, seed)
	dst := make([]byte, n)
	CopyToDevice(ctx, s, buf, src)
	if err := CopyFromDevice(ctx, s, dst, buf).Wait(ctx); err != nil {
		return err
	}
	if !bytes.Equal(src, dst) {
		return fmt.Errorf("round trip of %d bytes (seed %d): the bytes differ", n, seed)
	}
	return nil
}

func TestStagingChunks(t *testing.T) {
	for _, n := range []int{1, 4095, 1 << 20, 1<<20 + 1, 3<<20 + 5, 16 << 20, 64<<20 + 3, 1<<30 + 1} {
		c := stagingChunk(n, stagingSlotSize, stagingMinChunk)
		chunks := (n + c - 1) / c
		assert.LessOrEqual(t, c, stagingSlotSize, "n=%d", n)
		assert.Positive(t, c, "n=%d", n)
		if n <= stagingMinChunk {
			assert.Equal(t, n, c, "n=%d: one chunk", n)
			continue
		}
		assert.LessOrEqual(t, chunks, max(stagingSplit, (n+stagingSlotSize-1)/stagingSlotSize)+1, "n=%d", n)
		assert.Zero(t, c%4096, "n=%d: chunks end on 4 KiB", n)
		assert.Greater(t, n-(chunks-1)*c, 0, "n=%d: no empty last chunk", n)
	}
	for _, n := range []int{1, 63, 1<<20 - 1, 1 << 20, 1<<20 + 1, 8<<20 + 13} {
		src := stagingPattern(n, n)
		dst := make([]byte, n)
		parallelCopy(dst, src, 4)
		stagingEqual(t, src, dst, fmt.Sprintf("parallelCopy of %d bytes", n))
	}
}

func TestStagedRoundTripsByteForByte(t *testing.T) {
	stagingBackends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		dev := stagingOpen(t, opts)
		s := stagingStream(t, dev)
		testleak.AtCleanup(t)
		for _, n := range []int{1, 4095, 4097, 1<<20 + 1, 64<<20 + 3} {
			t.Run(fmt.Sprint(n), func(t *testing.T) {
				// Into and out of a range that starts at an odd offset of a larger buffer.
				const off = 37
				buf := stagingMalloc(t, dev, n+off+11)
				region := buf.Slice(off, uint64(n))
				src := stagingPattern(n, 1)

				stagingAwait(t, CopyToDevice(ctx, s, region, src))
				got := make([]byte, n)
				testdev.Read(t, ctx, got, region)
				stagingEqual(t, src, got, "upload, read back by the device")

				other := stagingPattern(n, 2)
				testdev.Write(t, ctx, region, other)
				dst := make([]byte, n)
				stagingAwait(t, CopyFromDevice(ctx, s, dst, region))
				stagingEqual(t, other, dst, "download of what the device wrote")

				// Back to back, only the last future awaited: the stream orders them.
				clear(dst)
				CopyToDevice(ctx, s, region, src)
				stagingAwait(t, CopyFromDevice(ctx, s, dst, region))
				stagingEqual(t, src, dst, "round trip")

				edges := make([]byte, off)
				testdev.Read(t, ctx, edges, buf.Slice(0, off))
				assert.Equal(t, make([]byte, off), edges, "nothing written before the range")
			})
		}
	})
}

func stagingTyped[T cuda.Numeric](t *testing.T, s *Stream, n int, gen func(i int) T) {
	ctx := testdev.Ctx(t)
	src := make([]T, n)
	for i := range src {
		src[i] = gen(i)
	}
	var zero T
	buf := stagingMalloc(t, s.Device(), n*int(unsafe.Sizeof(zero)))
	dst := make([]T, n)
	CopyToDevice(ctx, s, buf, src)
	stagingAwait(t, CopyFromDevice(ctx, s, dst, buf))
	require.Equal(t, src, dst)
}

func TestStagedTypedRoundTrips(t *testing.T) {
	stagingBackends(t, func(t *testing.T, opts []device.Option) {
		s := stagingStream(t, stagingOpen(t, opts))
		stagingTyped(t, s, (3<<20)/4+5, func(i int) float32 { return float32(i)*0.37 - 1e5 })
		stagingTyped(t, s, (2<<20)/8+3, func(i int) int64 { return int64(i)*-7919 + 1<<40 })
		stagingTyped(t, s, (1<<20)/2+1, func(i int) uint16 { return uint16(i * 31) })
		stagingTyped(t, s, 3, func(i int) float64 { return float64(i) / 3 })
	})
}

func TestStagedCopiesOrderWithTheStream(t *testing.T) {
	stagingBackends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		dev := stagingOpen(t, opts)
		s := stagingStream(t, dev)
		const n = 20<<20 + 9 // several chunks, more than the ring holds
		buf := stagingMalloc(t, dev, n)
		src := stagingPattern(n, 3)

		// Upload, a memset across chunk boundaries, download: only the last is awaited.
		want := bytes.Clone(src)
		const lo, hi = 3<<20 + 5, 8<<20 + 12
		for i := lo; i < hi; i++ {
			want[i] = 0xab
		}
		dst := make([]byte, n)
		CopyToDevice(ctx, s, buf, src)
		s.Memset(ctx, device.Range(buf, lo, hi-lo), 0xab)
		stagingAwait(t, CopyFromDevice(ctx, s, dst, buf))
		stagingEqual(t, want, dst, "upload, memset, download")

		// A later upload overwrites an earlier one.
		second := stagingPattern(n, 4)
		CopyToDevice(ctx, s, buf, src)
		CopyToDevice(ctx, s, buf, second)
		stagingAwait(t, CopyFromDevice(ctx, s, dst, buf))
		stagingEqual(t, second, dst, "the later upload wins")

		// Work queued after a download runs after all of it: the download sees the data from
		// before the memset, not the memset.
		down := CopyFromDevice(ctx, s, dst, buf)
		zeroed := s.Memset(ctx, buf, 0)
		stagingAwait(t, down)
		stagingEqual(t, second, dst, "the download read everything before the memset")
		stagingAwait(t, zeroed)
		got := make([]byte, n)
		testdev.Read(t, ctx, got, buf)
		stagingEqual(t, make([]byte, n), got, "the memset ran after the download")
	})
}

func TestStagedCopiesRunConcurrently(t *testing.T) {
	stagingBackends(t, func(t *testing.T, opts []device.Option) {
		dev := stagingOpen(t, opts)
		a, b := stagingStream(t, dev), stagingStream(t, dev)
		testleak.AtCleanup(t)
		ctx := testdev.Ctx(t)
		var wg sync.WaitGroup
		errs := make([]error, 4)
		// Two streams, two goroutines each, and so also copies sharing one stream's ring.
		for g, s := range []*Stream{a, b, a, b} {
			wg.Go(func() {
				for r := range 3 {
					errs[g] = errors.Join(errs[g], stagingTrip(ctx, s, 9<<20+13*g+r, 10*g+r))
				}
			})
		}
		wg.Wait()
		require.NoError(t, errors.Join(errs...))
	})
}

// TestStagingSmallRings runs copies of many chunks through rings smaller than the copies, with
// fewer or more copying goroutines than slots, so that slots are reused within one copy.
func TestStagingSmallRings(t *testing.T) {
	stagingBackends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		dev := stagingOpen(t, opts)
		for _, p := range []stagingParams{{slots: 2, slotSize: 1 << 20, workers: 4, downWorkers: 4}, {slots: 3, slotSize: 1 << 20, workers: 2, downWorkers: 3}, {slots: 5, slotSize: 2 << 20, workers: 3, downWorkers: 2}} {
			t.Run(fmt.Sprintf("%d×%dMiB,%d,%d", p.slots, p.slotSize>>20, p.workers, p.downWorkers), func(t *testing.T) {
				s := stagingStream(t, dev)
				stagingRing(s, p)
				testleak.AtCleanup(t)
				const n = 13<<20 + 7
				buf := stagingMalloc(t, dev, n)
				src := stagingPattern(n, 11)
				dst := make([]byte, n)
				CopyToDevice(ctx, s, buf, src)
				zeroed := s.Memset(ctx, device.Range(buf, 5<<20, 1<<20), 0)
				down := CopyFromDevice(ctx, s, dst, buf)
				s.Memset(ctx, buf, 0)
				stagingAwait(t, down)
				stagingAwait(t, zeroed)
				want := bytes.Clone(src)
				clear(want[5<<20 : 6<<20])
				stagingEqual(t, want, dst, "upload, memset, download, memset")
				var wg sync.WaitGroup
				errs := make([]error, 3)
				for g := range 3 {
					wg.Go(func() { errs[g] = stagingTrip(ctx, s, 5<<20+g, g) })
				}
				wg.Wait()
				require.NoError(t, errors.Join(errs...))
			})
		}
	})
}

func TestStagedBadInput(t *testing.T) {
	stagingBackends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		dev := stagingOpen(t, opts)
		s := stagingStream(t, dev)
		buf := stagingMalloc(t, dev, 64)
		data := make([]byte, 64)
		check := func(f *Future, target error, what string) {
			t.Helper()
			require.True(t, f.Ready(), "%s: refused at once", what)
			assert.ErrorIs(t, f.Err(), target, what)
		}
		check(CopyToDevice(ctx, nil, buf, data), device.ErrInvalidArgument, "nil stream")
		check(CopyFromDevice(ctx, nil, data, buf), device.ErrInvalidArgument, "nil stream")
		check(CopyToDevice[byte](ctx, s, buf, nil), device.ErrInvalidArgument, "nil slice")
		check(CopyFromDevice[byte](ctx, s, nil, buf), device.ErrInvalidArgument, "nil slice")
		check(CopyToDevice(ctx, s, buf, []float32{}), device.ErrInvalidArgument, "empty slice")
		check(CopyFromDevice(ctx, s, []int64{}, buf), device.ErrInvalidArgument, "empty slice")
		check(CopyToDevice(ctx, s, nil, data), device.ErrInvalidArgument, "nil destination")
		check(CopyFromDevice(ctx, s, data, (*device.Buffer)(nil)), device.ErrInvalidArgument, "nil buffer")
		check(CopyToDevice(ctx, s, buf, make([]byte, 65)), device.ErrOutOfRange, "slice larger than the buffer")
		check(CopyFromDevice(ctx, s, make([]uint32, 17), buf), device.ErrOutOfRange, "slice larger than the buffer")
		check(CopyToDevice(ctx, s, buf.Slice(8, 8), make([]uint64, 2)), device.ErrOutOfRange, "slice larger than the range")
		check(CopyFromDevice(ctx, s, data, buf.Slice(60, 8)), device.ErrOutOfRange, "range past the buffer")

		other, err := device.Open(ctx, 0, opts...) // another handle: another device to gpuactor
		require.NoError(t, err)
		defer other.Close()
		foreign, err := other.MallocBytes(ctx, 64)
		require.NoError(t, err)
		check(CopyToDevice(ctx, s, foreign, data), device.ErrWrongDevice, "buffer of another device")

		freed, err := dev.MallocBytes(ctx, 64)
		require.NoError(t, err)
		require.NoError(t, freed.Close(ctx))
		err = CopyToDevice(ctx, s, freed, data).Wait(ctx)
		assert.ErrorIs(t, err, device.ErrClosed, "freed buffer")
		err = CopyFromDevice(ctx, s, data, freed).Wait(ctx)
		assert.ErrorIs(t, err, device.ErrClosed, "freed buffer")

		cancelled, cancel := context.WithCancel(ctx)
		cancel()
		check(CopyToDevice(cancelled, s, buf, data), context.Canceled, "cancelled context")
		check(CopyFromDevice(cancelled, s, data, buf), context.Canceled, "cancelled context")

		stagingRoundTrip(t, s, 4097, 5) // the stream still works

		gone, err := New(ctx, dev)
		require.NoError(t, err)
		require.NoError(t, gone.Close(ctx))
		check(CopyToDevice(ctx, gone, buf, data), device.ErrClosed, "closed stream")
		check(CopyFromDevice(ctx, gone, data, buf), device.ErrClosed, "closed stream")
	})
}

// stagingPrefix requires got to be a prefix of want, of a whole number of chunks of size
// chunk, followed by zeros, and returns the prefix's length.
func stagingPrefix(t *testing.T, want, got []byte, chunk int) int {
	t.Helper()
	k := 0 // whole chunks that match (the pattern has no zeros, so none matches by chance)
	for k < len(got) && bytes.Equal(got[k:min(k+chunk, len(got))], want[k:min(k+chunk, len(want))]) {
		k = min(k+chunk, len(got))
	}
	stagingEqual(t, want[:k], got[:k], "the prefix")
	stagingEqual(t, make([]byte, len(got)-k), got[k:], "past the prefix")
	return k
}

// TestStagingUploadsKeepToTheirSlots: uploads ask the pool for workers+stagingSpare slots,
// downloads for all the geometry's slots, the pool pins them as they are first asked for,
// and copies in both directions, one after another, stay byte for byte.
func TestStagingUploadsKeepToTheirSlots(t *testing.T) {
	stagingBackends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		dev := stagingOpen(t, opts)
		s := stagingStream(t, dev)
		testleak.AtCleanup(t)
		p := stagingParams{slots: 12, slotSize: 1 << 20, workers: 2, downWorkers: 4}
		st := stagingRing(s, p)
		require.Equal(t, 2+stagingSpare, st.upSlots())
		const n = 25<<20 + 3 // 26 chunks of 1 MiB: each slot more than once
		buf := stagingMalloc(t, dev, n)
		for r := range 3 {
			src := stagingPattern(n, 40+r)
			stagingAwait(t, CopyToDevice(ctx, s, buf, src))
			stagingSlotsBack(t, st.pool)
			if r == 0 {
				assert.Equal(t, uint64(st.upSlots())*stagingSlotSize, st.pool.Stats().PinnedBytes, "the upload's slots")
			}
			dst := make([]byte, n)
			stagingAwait(t, CopyFromDevice(ctx, s, dst, buf))
			stagingEqual(t, src, dst, fmt.Sprintf("round %d", r))
			stats := st.pool.Stats()
			assert.Equal(t, uint64(p.slots)*stagingSlotSize, stats.PinnedBytes, "round %d: the download's slots, the upload's among them", r)
			assert.Zero(t, stats.InUseBytes, "round %d: every slot given back", r)
		}
	})
}

func TestStagedCancellation(t *testing.T) {
	stagingBackends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		dev := stagingOpen(t, opts)
		s := stagingStream(t, dev)
		testleak.AtCleanup(t)
		const stagingSlots = 12 // a ring of fixed geometry: the default one depends on the host
		stagingRing(s, stagingParams{slots: stagingSlots, slotSize: stagingSlotSize, workers: 4, downWorkers: 4})
		const n = 64 << 20 // 16 chunks: more than the ring
		chunk := stagingChunk(n, stagingSlotSize, stagingMinChunk)
		require.Greater(t, n/chunk, stagingSlots)
		buf := stagingMalloc(t, dev, n)
		src := stagingPattern(n, 6)

		for _, up := range []bool{true, false} {
			t.Run(map[bool]string{true: "upload", false: "download"}[up], func(t *testing.T) {
				dst := make([]byte, n)
				if up {
					require.NoError(t, Default(dev).Memset(ctx, buf, 0).Wait(ctx))
				} else {
					testdev.Write(t, ctx, buf, src)
				}
				// Hold the stream, so that the copy fills the ring and waits for a slot.
				gate := make(chan struct{})
				held := s.HostFunc(ctx, func() { <-gate })
				cctx, cancel := context.WithCancel(ctx)
				before := s.stager(nil).queued.Load()
				returned := make(chan *Future, 1)
				go func() {
					if up {
						returned <- CopyToDevice(cctx, s, buf, src)
					} else {
						returned <- CopyFromDevice(cctx, s, dst, buf)
					}
				}()

				// Once the copy has filled the ring, it waits for a slot.
				require.Eventually(t, func() bool { return s.stager(nil).queued.Load() == before+stagingSlots },
					time.Minute, time.Millisecond)
				time.Sleep(10 * time.Millisecond)
				assert.Equal(t, before+stagingSlots, s.stager(nil).queued.Load(), "no more than the ring holds")
				// A second copy on the stream waits for the ring; its own ctx lets it go.
				other, cancelOther := context.WithTimeout(ctx, 20*time.Millisecond)
				defer cancelOther()
				err := CopyToDevice(other, s, buf, []byte{1}).Wait(ctx)
				require.ErrorIs(t, err, context.DeadlineExceeded, "a copy waiting for the ring gives up with its ctx")

				cancel()
				var f *Future
				select {
				case f = <-returned:
				case <-ctx.Done():
					t.Fatal("the cancelled copy did not return")
				}
				assert.False(t, f.Ready(), "the chunks already queued have not run yet")
				close(gate)
				stagingAwait(t, held)
				err = f.Wait(ctx)
				require.ErrorIs(t, err, context.Canceled)

				if up {
					got := make([]byte, n)
					testdev.Read(t, ctx, got, buf)
					k := stagingPrefix(t, src, got, chunk)
					assert.Equal(t, stagingSlots*chunk, k, "the chunks queued before the cancel reached the device")
				} else {
					k := stagingPrefix(t, src, dst, chunk)
					assert.Equal(t, stagingSlots*chunk, k, "the chunks queued before the cancel landed in dst")
				}
				stagingRoundTrip(t, s, 3<<20+1, 7) // the stream and its ring still work
			})
		}
	})
}

// The staging pool is the device's: a stream's Close leaves its slots to the other streams,
// what it pinned counts as pinned memory, and the device's Close frees it.
func TestStagingPoolOutlivesItsStreams(t *testing.T) {
	stagingBackends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		dev, err := device.Open(ctx, 0, opts...)
		require.NoError(t, err)
		testleak.AtCleanup(t)

		s, err := New(ctx, dev)
		require.NoError(t, err)
		require.Nil(t, s.ring(), "no staging state before the first staged copy")
		before := dev.Stats().Memory.Pinned
		small := stagingMalloc(t, dev, 4097)
		stagingAwait(t, CopyToDevice(ctx, s, small, stagingPattern(4097, 8)))
		stagingSlotsBack(t, s.ring().pool)
		stagingAwait(t, CopyFromDevice(ctx, s, make([]byte, 4097), small))
		st := s.ring()
		require.NotNil(t, st)
		pinned := st.pool.Stats().PinnedBytes
		require.Equal(t, uint64(stagingSlotSize), pinned, "one chunk each way: one slot, pinned once")
		assert.Equal(t, device.KindUsage{Bytes: before.Bytes + pinned, Count: before.Count + 1}, dev.Stats().Memory.Pinned,
			"staging counts as pinned memory")

		// A download still in flight when the stream closes completes, data and all.
		const n = 3<<20 + 5 // four chunks: queued at once
		buf := stagingMalloc(t, dev, n)
		src := stagingPattern(n, 9)
		testdev.Write(t, ctx, buf, src)
		gate := make(chan struct{})
		s.HostFunc(ctx, func() { <-gate })
		dst := make([]byte, n)
		down := CopyFromDevice(ctx, s, dst, buf)
		require.False(t, down.Ready())
		time.AfterFunc(20*time.Millisecond, func() { close(gate) })
		require.NoError(t, s.Close(ctx))
		stagingAwait(t, down)
		stagingEqual(t, src, dst, "the download in flight at Close")
		err = CopyToDevice(ctx, s, buf, src).Wait(ctx)
		assert.ErrorIs(t, err, device.ErrClosed)
		err = CopyFromDevice(ctx, s, dst, buf).Wait(ctx)
		assert.ErrorIs(t, err, device.ErrClosed)

		stats := st.pool.Stats()
		assert.Zero(t, stats.InUseBytes, "the closed stream's copies gave their slots back")
		assert.NotZero(t, stats.PinnedBytes, "and the pool keeps them for the device's other streams")
		other := stagingStream(t, dev)
		stagingAwait(t, CopyToDevice(ctx, other, buf, src))
		stagingSlotsBack(t, st.pool)
		stagingAwait(t, CopyFromDevice(ctx, other, dst, buf))
		assert.Equal(t, stats.PinnedBytes, st.pool.Stats().PinnedBytes, "another stream reuses them")

		require.NoError(t, dev.Close())
		assert.Equal(t, before, dev.Stats().Memory.Pinned, "the device's Close freed the pool and gave its charge back")
		assert.ErrorIs(t, st.fill(nil, []byte{1}, 1), device.ErrClosed, "nothing touches the freed slots")
	})
}

// A device's staged copies share its staging limit, however many streams copy at once: a copy
// that finds every slot lent waits for one (and gives up with its context), and nothing pins
// past the limit.
func TestStagingLimitIsShared(t *testing.T) {
	stagingBackends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		const limit = 2 * stagingSlotSize
		dev := stagingOpen(t, append(opts, device.WithStagingLimit(limit+stagingSlotSize/2)))
		a, b := stagingStream(t, dev), stagingStream(t, dev)
		testleak.AtCleanup(t)
		const n = 9 << 20 // 8 chunks: more than the limit's slots
		buf := stagingMalloc(t, dev, n)
		src := stagingPattern(n, 11)

		// a's copy takes both slots and waits for its first chunk, held behind a gate.
		gate := make(chan struct{})
		held := a.HostFunc(ctx, func() { <-gate })
		up := make(chan *Future, 1)
		go func() { up <- CopyToDevice(ctx, a, buf, src) }()
		pool := a.stager(nil).pool
		require.Eventually(t, func() bool { return pool.Stats().InUseBytes == limit }, time.Minute, time.Millisecond)

		// b's copy finds none: it waits, and gives up with its ctx.
		cctx, cancel := context.WithCancel(ctx)
		small := make(chan error, 1)
		go func() { small <- CopyToDevice(cctx, b, buf, []byte{1, 2, 3}).Wait(ctx) }()
		require.Eventually(t, func() bool { return pool.Stats().Waiting == 1 }, time.Minute, time.Millisecond)
		cancel()
		require.ErrorIs(t, <-small, context.Canceled)
		assert.Zero(t, pool.Stats().Waiting)
		assert.Equal(t, uint64(1), pool.Stats().Waits)

		close(gate)
		stagingAwait(t, held)
		stagingAwait(t, <-up)
		got := make([]byte, n)
		testdev.Read(t, ctx, got, buf)
		stagingEqual(t, src, got, "the copy through two slots")

		// Eight streams copying at once all get through the two slots.
		var wg sync.WaitGroup
		errs := make([]error, 8)
		for i := range errs {
			s := stagingStream(t, dev)
			wg.Go(func() { errs[i] = stagingTrip(ctx, s, 5<<20+i, 20+i) })
		}
		wg.Wait()
		require.NoError(t, errors.Join(errs...))
		stats := pool.Stats()
		assert.Equal(t, uint64(limit), stats.PinnedBytes, "never more than the limit")
		assert.Equal(t, uint64(limit), stats.LimitBytes)
		assert.Zero(t, stats.InUseBytes)
		stagingRoundTrip(t, a, 1<<20, 30)
	})
}

func TestStagedCopiesInFlightWhenTheDeviceCloses(t *testing.T) {
	stagingBackends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		dev, err := device.Open(ctx, 0, opts...)
		require.NoError(t, err)
		s, err := New(ctx, dev)
		require.NoError(t, err)
		const n = 40<<20 + 1
		buf, err := dev.MallocBytes(ctx, n)
		require.NoError(t, err)
		src := stagingPattern(n, 10)
		dst := make([]byte, n)
		up := CopyToDevice(ctx, s, buf, src)
		down := CopyFromDevice(ctx, s, dst, buf)
		require.NoError(t, dev.Close()) // settles the stream, destroys it, frees the staging pool
		err = up.Wait(ctx)
		require.NoError(t, err)
		err = down.Wait(ctx)
		require.NoError(t, err)
		stagingEqual(t, src, dst, "the download queued before Close")
		err = CopyToDevice(ctx, s, buf, src).Wait(ctx)
		assert.Error(t, err)
		assert.ErrorIs(t, err, device.ErrClosed)
	})
}

func TestStagingWorkersFitTheHost(t *testing.T) {
	assert.Equal(t, 4, stagingWorkersFor(16e9, 16), "fast cores: four reach the link")
	assert.Equal(t, 10, stagingWorkersFor(6.5e9, 16), "slow cores: more of them")
	assert.Equal(t, 14, stagingWorkersFor(1e9, 16), "never more than GOMAXPROCS-2")
	assert.Equal(t, stagingMinWorkers, stagingWorkersFor(100e9, 2), "at least two")
	assert.Equal(t, stagingMinWorkers, stagingWorkersFor(1e9, 1))
	p := stagingParamsFor(0)
	assert.GreaterOrEqual(t, p.workers, stagingMinWorkers)
	assert.GreaterOrEqual(t, p.downWorkers, p.workers, "downloads take every core the host allows")
	assert.Equal(t, stagingWorkersFor(0, runtime.GOMAXPROCS(0)), p.downWorkers)
	assert.Equal(t, p.downWorkers+stagingSpare, p.slots)
	assert.Equal(t, stagingParams{workers: 3, downWorkers: 3, slots: 3 + stagingSpare, slotSize: stagingSlotSize}, stagingParamsFor(3), "StagingWorkers(3)")
}

func TestStagingWorkersOption(t *testing.T) {
	stagingBackends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		dev := stagingOpen(t, opts)
		for _, n := range []int{-1, 0, maxStagingWorkers + 1} {
			_, err := New(ctx, dev, StagingWorkers(n))
			require.Error(t, err, "StagingWorkers(%d)", n)
			assert.ErrorIs(t, err, device.ErrInvalidArgument)
			assert.Contains(t, err.Error(), "StagingWorkers")
		}
		s, err := New(ctx, dev, StagingWorkers(3))
		require.NoError(t, err)
		defer s.Close(ctx)
		assert.Equal(t, 3, s.stager(nil).p.workers)
		assert.Equal(t, 3, s.stager(nil).p.downWorkers)
		n := 5<<20 + 7
		src := stagingPattern(n, 3)
		buf := stagingMalloc(t, dev, n)
		err = CopyToDevice(ctx, s, buf, src).Wait(ctx)
		require.NoError(t, err)
		dst := make([]byte, n)
		err = CopyFromDevice(ctx, s, dst, buf).Wait(ctx)
		require.NoError(t, err)
		stagingEqual(t, src, dst, "round trip through 3 copiers")
	})
}

// stagingSlotsBack waits until every staging slot of pool is back: an upload's future
// completes once its chunks are queued, and its slots come back once the GPU has read them.
func stagingSlotsBack(t *testing.T, pool *core.Staging) {
	t.Helper()
	require.Eventually(t, func() bool { return pool.Stats().InUseBytes == 0 }, time.Minute, time.Millisecond)
}

// stagingRing installs a ring of geometry p on s, which must not have one yet, and returns it.
func stagingRing(s *Stream, p stagingParams) *stager {
	st := s.stager(func() stagingParams { return p })
	if st.p != p {
		panic("stagingRing: the stream has a ring already")
	}
	return st
}
