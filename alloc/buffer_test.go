package alloc_test

import (
	"context"
	"fmt"
	"math"
	"sync"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/internal/testfix"
	"github.com/gpuactor/gpuactor/streams"
)

// roundTrip allocates a Buffer[T] on s, copies vals in and out on the buffer's stream, and
// frees it. The copies go as bytes, so that every element type a Buffer takes is covered.
func roundTrip[T comparable](t *testing.T, f *fixture, s *streams.Stream, vals []T) {
	t.Helper()
	b, fut, err := alloc.MallocAsync[T](f.Ctx, s, len(vals))
	require.NoError(t, err)
	testfix.Await(t, f.Ctx, fut)
	require.Equal(t, len(vals), b.Len())
	var zero T
	require.Equal(t, unsafe.Sizeof(zero), b.ElemSize())
	require.Equal(t, uint64(len(vals))*uint64(b.ElemSize()), b.Size())
	require.NoError(t, streams.CopyToDevice(f.Ctx, b.Stream(), b, bytesOf(vals)).Wait(f.Ctx))
	out := make([]T, len(vals))
	require.NoError(t, streams.CopyFromDevice(f.Ctx, b.Stream(), bytesOf(out), b).Wait(f.Ctx))
	require.Equal(t, vals, out)
	require.NoError(t, b.Close(f.Ctx))
}

type particle struct {
	Pos  [3]float32
	Mass float64
	ID   uint16
}

func TestTypedRoundTripEveryType(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.Stream(t)
		roundTrip(t, f, s, []int8{-128, -1, 0, 1, 127})
		roundTrip(t, f, s, []int16{math.MinInt16, -2, 0, 3, math.MaxInt16})
		roundTrip(t, f, s, []int32{math.MinInt32, -3, 0, 4, math.MaxInt32})
		roundTrip(t, f, s, []int64{math.MinInt64, -4, 0, 5, math.MaxInt64})
		roundTrip(t, f, s, []int{math.MinInt, -5, 0, 6, math.MaxInt})
		roundTrip(t, f, s, []uint8{0, 1, 2, 254, 255})
		roundTrip(t, f, s, []uint16{0, 1, math.MaxUint16})
		roundTrip(t, f, s, []uint32{0, 1, math.MaxUint32})
		roundTrip(t, f, s, []uint64{0, 1, math.MaxUint64})
		roundTrip(t, f, s, []uint{0, 7, math.MaxUint})
		roundTrip(t, f, s, []uintptr{0, 8, ^uintptr(0)})
		roundTrip(t, f, s, []float32{-1.5, 0, float32(math.Inf(1)), math.SmallestNonzeroFloat32, math.MaxFloat32})
		roundTrip(t, f, s, []float64{-2.5, 0, math.Inf(-1), math.SmallestNonzeroFloat64, math.MaxFloat64})
		roundTrip(t, f, s, []complex64{1 + 2i, -3i})
		roundTrip(t, f, s, []complex128{4 - 5i, 6})
		roundTrip(t, f, s, []bool{true, false, true})
		roundTrip(t, f, s, []particle{{Pos: [3]float32{1, 2, 3}, Mass: 4.5, ID: 6}, {ID: 7}})
		// A long one, past any staging chunk.
		big := make([]float64, 3<<20)
		for i := range big {
			big[i] = float64(i) * 0.5
		}
		roundTrip(t, f, s, big)
	})
}

func TestBufferIsDeviceMem(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.Stream(t)
		const n = 1000
		b, _, err := alloc.MallocAsync[uint32](f.Ctx, s, n)
		require.NoError(t, err)
		in := make([]uint32, n)
		for i := range in {
			in[i] = uint32(i)
		}
		require.NoError(t, streams.CopyToDevice(f.Ctx, s, b, in).Wait(f.Ctx))
		// Kernels and streams' copies take the typed buffer as any device memory.
		cfg := cuda.LaunchConfig{Grid: cuda.Dim(4), Block: cuda.Dim(256)}
		testfix.Await(t, f.Ctx, s.Launch(f.Ctx, f.add, cfg, b, uint32(10), int32(n)))
		c, _, err := alloc.MallocAsync[uint32](f.Ctx, s, n)
		require.NoError(t, err)
		testfix.Await(t, f.Ctx, s.Copy(f.Ctx, c, b))
		testfix.Await(t, f.Ctx, s.Launch(f.Ctx, f.add, cfg, c.Elems(0, n/2), uint32(1), int32(n/2)))
		out := make([]uint32, n)
		require.NoError(t, streams.CopyFromDevice(f.Ctx, s, out, c).Wait(f.Ctx))
		for i, v := range out {
			want := uint32(i) + 10
			if i < n/2 {
				want++
			}
			require.Equal(t, want, v, "element %d", i)
		}
		require.NoError(t, b.Close(f.Ctx))
		require.NoError(t, c.Close(f.Ctx))
	})
}

func TestBufferBadInput(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.Stream(t)
		ctx := f.Ctx
		_, _, err := alloc.MallocAsync[*int](ctx, s, 4)
		require.ErrorIs(t, err, alloc.ErrElemType)
		_, _, err = alloc.MallocAsync[struct{ S string }](ctx, s, 4)
		require.ErrorIs(t, err, alloc.ErrElemType)
		_, _, err = alloc.MallocAsync[struct{}](ctx, s, 4)
		require.ErrorIs(t, err, alloc.ErrElemType)
		_, _, err = alloc.MallocAsync[float32](ctx, s, 0)
		require.ErrorIs(t, err, device.ErrInvalidArgument)
		_, _, err = alloc.MallocAsync[float32](ctx, s, -1)
		require.ErrorIs(t, err, device.ErrInvalidArgument)
		_, _, err = alloc.MallocAsync[float32](ctx, nil, 1)
		require.ErrorIs(t, err, device.ErrInvalidArgument)
		_, _, err = alloc.MallocAsync[uint64](ctx, s, math.MaxInt)
		require.ErrorIs(t, err, device.ErrInvalidArgument) // overflows
		// A petabyte: the runtime refuses it when the device runs the allocation, so the error
		// comes with the future, and every use of the buffer reports it.
		huge, hugeFut, err := alloc.MallocAsync[byte](ctx, s, 1<<50)
		require.NoError(t, err)
		allocErr := hugeFut.Wait(ctx)
		require.Error(t, allocErr)
		err = streams.CopyToDevice(ctx, huge.Stream(), huge, []byte{1}).Wait(ctx)
		require.ErrorIs(t, err, device.ErrAllocFailed)
		require.ErrorIs(t, err, allocErr)
		require.ErrorIs(t, huge.Close(ctx), device.ErrAllocFailed)
		require.Zero(t, f.Dev.Stats().Memory.Async.Count, "the refused allocation is not counted")

		// A Buffer[T]'s size is its elements' bytes: copies past them are refused.
		b, _, err := alloc.MallocAsync[uint32](ctx, s, 8)
		require.NoError(t, err)
		require.ErrorIs(t, streams.CopyToDevice(ctx, b.Stream(), b, make([]uint32, 9)).Wait(ctx), device.ErrOutOfRange)
		require.ErrorIs(t, streams.CopyFromDevice(ctx, b.Stream(), make([]uint32, 9), b).Wait(ctx), device.ErrOutOfRange)
		require.ErrorIs(t, streams.CopyToDevice[uint32](ctx, b.Stream(), b, nil).Wait(ctx), device.ErrInvalidArgument)
		err = s.Launch(ctx, f.add, one(), b.Elems(4, 9), uint32(1), int32(1)).Wait(ctx)
		require.ErrorIs(t, err, device.ErrOutOfRange)

		// Freed in stream order: every later use is ErrClosed, at once.
		fut := b.CloseOn(ctx, nil)
		require.ErrorIs(t, streams.CopyToDevice(ctx, b.Stream(), b, []uint32{1}).Wait(ctx), device.ErrClosed)
		require.ErrorIs(t, streams.CopyFromDevice(ctx, b.Stream(), []uint32{1}, b).Wait(ctx), device.ErrClosed)
		err = s.Launch(ctx, f.add, one(), b, uint32(1), int32(8)).Wait(ctx)
		require.ErrorIs(t, err, device.ErrClosed)
		err = s.Memset(ctx, b, 0).Wait(ctx)
		require.ErrorIs(t, err, device.ErrClosed)
		err = b.CloseOn(ctx, nil).Wait(ctx)
		require.ErrorIs(t, err, device.ErrClosed)
		require.ErrorIs(t, b.Close(ctx), device.ErrClosed)
		testfix.Await(t, ctx, fut)
		require.ErrorIs(t, b.Buffer.Close(ctx), device.ErrClosed)

		var nilBuf *alloc.Buffer[uint32]
		err = s.Launch(ctx, f.add, one(), nilBuf, uint32(1), int32(8)).Wait(ctx)
		require.ErrorIs(t, err, device.ErrKernelArgs)
		err = nilBuf.CloseOn(ctx, nil).Wait(ctx)
		require.ErrorIs(t, err, device.ErrInvalidArgument)

		requireStreamUsable(t, f, s)
		require.Zero(t, f.Dev.Stats().Memory.Async.Count)
	})
}

// A stream-ordered buffer of one device is refused by another's streams, except as either end
// of a copy: every ordered pair of devices (a few small calls each).
func TestBufferOnAnotherDevice(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		devs := f.All(t)
		ss := make([]*streams.Stream, len(devs))
		for i, d := range devs {
			var err error
			ss[i], err = streams.New(f.Ctx, d)
			require.NoError(t, err)
			defer ss[i].Close(context.Background())
		}
		for _, p := range testdev.Pairs(len(devs)) {
			t.Run(fmt.Sprintf("%d-%d", p[0], p[1]), func(t *testing.T) {
				s, so := ss[p[0]], ss[p[1]]
				b, _, err := alloc.MallocAsync[float32](f.Ctx, s, 16)
				require.NoError(t, err)
				err = b.CloseOn(f.Ctx, so).Wait(f.Ctx)
				require.ErrorIs(t, err, device.ErrWrongDevice)
				err = so.Memset(f.Ctx, b, 0).Wait(f.Ctx)
				require.ErrorIs(t, err, device.ErrWrongDevice)
				c, _, err := alloc.MallocAsync[float32](f.Ctx, so, 16)
				require.NoError(t, err)
				require.NoError(t, so.Copy(f.Ctx, c, b).Wait(f.Ctx), "a copy between two devices' buffers is a peer copy")
				require.NoError(t, b.Close(f.Ctx))
				require.NoError(t, c.Close(f.Ctx))
			})
		}
	})
}

// Many goroutines allocate, use and free on several streams at once; the accounting ends at
// zero and nothing is lost or closed twice.
func TestConcurrentAllocFree(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		const workers, rounds = 8, 25
		ss := []*streams.Stream{f.Stream(t), f.Stream(t), f.Stream(t)}
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		for w := range workers {
			wg.Go(func() {
				s := ss[w%len(ss)]
				for r := range rounds {
					n := 1 + (w*rounds+r)%4096
					b, _, err := alloc.MallocAsync[uint32](f.Ctx, s, n)
					if err != nil {
						errs <- err
						return
					}
					in := make([]uint32, n)
					for i := range in {
						in[i] = uint32(w<<20 | r<<12 | i)
					}
					out := make([]uint32, n)
					if err := streams.CopyToDevice(f.Ctx, s, b, in).Wait(f.Ctx); err != nil {
						errs <- err
						return
					}
					if err := streams.CopyFromDevice(f.Ctx, s, out, b).Wait(f.Ctx); err != nil {
						errs <- err
						return
					}
					for i := range in {
						if in[i] != out[i] {
							errs <- fmt.Errorf("worker %d round %d: element %d is %#x, want %#x", w, r, i, out[i], in[i])
							return
						}
					}
					b.CloseOn(f.Ctx, nil)
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		for _, s := range ss {
			require.NoError(t, s.Synchronize(f.Ctx))
		}
		u := f.Dev.Stats().Memory
		require.Zero(t, u.Async.Count)
		require.Zero(t, u.Async.Bytes)
	})
}
