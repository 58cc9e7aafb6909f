package device_test

import (
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/streams"
)

func TestProperties(t *testing.T) {
	testdev.Backends(t, func(t *testing.T, opts []device.Option) {
		dev := openDev(t, opts)
		p := dev.Properties()
		assert.NotEmpty(t, p.Name)
		assert.Positive(t, p.ComputeCapability.Major)
		assert.Positive(t, p.MultiProcessors)
		assert.Positive(t, p.TotalMemory)
		assert.Equal(t, 32, p.WarpSize)
		assert.GreaterOrEqual(t, p.MaxThreadsPerBlock, 256)
		assert.Regexp(t, `^[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-9]$`, p.PCIBusID)
		assert.Positive(t, p.RuntimeVersion)
		free, total, err := dev.MemInfo(testdev.Ctx(t))
		require.NoError(t, err)
		assert.Equal(t, p.TotalMemory, total)
		assert.LessOrEqual(t, free, total)
		t.Logf("%s: %+v", dev, p)
	})
}

func TestCountAndOpenAll(t *testing.T) {
	testdev.Backends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		n, err := device.Count(ctx, opts...)
		require.NoError(t, err)
		require.Positive(t, n)
		devs, err := device.OpenAll(ctx, opts...)
		require.NoError(t, err)
		require.Len(t, devs, n)
		for i, d := range devs {
			assert.Equal(t, i, d.Ordinal())
			testdev.RequireUsable(t, d)
			require.NoError(t, d.Close())
		}
	})
}

// roundTrip copies random values of T to the device and back.
func roundTrip[T cuda.Numeric](t *testing.T, dev *device.Device, n int, gen func(*rand.Rand) T) {
	ctx := testdev.Ctx(t)
	rng := rand.New(rand.NewPCG(uint64(n), 7))
	in := make([]T, n)
	for i := range in {
		in[i] = gen(rng)
	}
	var zero T
	buf, err := dev.MallocBytes(ctx, uint64(n)*uint64(unsafe.Sizeof(zero)))
	require.NoError(t, err)
	defer func() { require.NoError(t, buf.Close(ctx)) }()
	upload(t, buf, in)
	out := make([]T, n)
	download(t, out, buf)
	require.Equal(t, in, out)
}

func TestTypedRoundTrips(t *testing.T) {
	testdev.Backends(t, func(t *testing.T, opts []device.Option) {
		dev := openDev(t, opts)
		for _, n := range []int{1, 3, 1023, 4097} {
			roundTrip(t, dev, n, func(r *rand.Rand) int8 { return int8(r.Uint32()) })
			roundTrip(t, dev, n, func(r *rand.Rand) uint8 { return uint8(r.Uint32()) })
			roundTrip(t, dev, n, func(r *rand.Rand) int16 { return int16(r.Uint32()) })
			roundTrip(t, dev, n, func(r *rand.Rand) uint16 { return uint16(r.Uint32()) })
			roundTrip(t, dev, n, func(r *rand.Rand) int32 { return int32(r.Uint32()) })
			roundTrip(t, dev, n, func(r *rand.Rand) uint32 { return r.Uint32() })
			roundTrip(t, dev, n, func(r *rand.Rand) int64 { return int64(r.Uint64()) })
			roundTrip(t, dev, n, func(r *rand.Rand) uint64 { return r.Uint64() })
			roundTrip(t, dev, n, func(r *rand.Rand) float32 { return r.Float32()*2 - 1 })
			roundTrip(t, dev, n, func(r *rand.Rand) float64 { return r.NormFloat64() })
			roundTrip(t, dev, n, func(r *rand.Rand) int { return int(r.Int64()) })
		}
	})
}

func TestSlicesMemsetAndDeviceCopy(t *testing.T) {
	testdev.Backends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		dev := openDev(t, opts)
		s := streams.Default(dev)
		a, err := dev.MallocBytes(ctx, 1000)
		require.NoError(t, err)
		b, err := dev.MallocBytes(ctx, 1000)
		require.NoError(t, err)
		require.NoError(t, s.Memset(ctx, a, 0xAB).Wait(ctx))
		require.NoError(t, s.Memset(ctx, a.Slice(100, 7), 0x01).Wait(ctx))
		require.NoError(t, s.Copy(ctx, b, a).Wait(ctx))
		out := make([]byte, 1000)
		download(t, out, b)
		for i, v := range out {
			want := byte(0xAB)
			if i >= 100 && i < 107 {
				want = 0x01
			}
			require.Equal(t, want, v, "byte %d", i)
		}
		tail := make([]byte, 3)
		download(t, tail, b.Slice(104, 3))
		assert.Equal(t, []byte{1, 1, 1}, tail)
		upload(t, b.Slice(997, 3), []byte{9, 8, 7})
		download(t, tail, b.Slice(997, 3))
		assert.Equal(t, []byte{9, 8, 7}, tail)
	})
}

func TestPinnedHostBuffer(t *testing.T) {
	testdev.Backends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		dev := openDev(t, opts)
		const n = 1 << 20
		h, err := dev.MallocPinnedBytes(ctx, 4*n, device.HostPortable)
		require.NoError(t, err)
		xs := device.HostSlice[float32](h)
		require.Len(t, xs, n)
		for i := range xs {
			xs[i] = float32(i) * 0.5
		}
		buf, err := dev.MallocBytes(ctx, 4*n)
		require.NoError(t, err)
		s := streams.Default(dev)
		require.NoError(t, s.CopyHostToDevice(ctx, buf, h).Wait(ctx))
		back, err := dev.MallocPinnedBytes(ctx, 4*n)
		require.NoError(t, err)
		require.NoError(t, s.CopyDeviceToHost(ctx, back, buf).Wait(ctx))
		require.Equal(t, xs, device.HostSlice[float32](back))
		require.NoError(t, h.Close(ctx))
		_, err = h.DevicePtr(ctx)
		assert.ErrorIs(t, err, device.ErrClosed)
		_, err = (*device.HostBuffer)(nil).DevicePtr(ctx)
		assert.ErrorIs(t, err, device.ErrInvalidArgument)
		assert.Nil(t, h.Host())
		assert.Nil(t, device.HostSlice[float32](h))
		assert.True(t, h.Closed())
		require.ErrorIs(t, h.Close(ctx), device.ErrClosed)
	})
}

func TestSaxpyKernel(t *testing.T) {
	testdev.Backends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		dev := openDev(t, opts)
		mod := saxpyModule(t, dev)
		k, err := mod.Kernel(ctx, "saxpy")
		require.NoError(t, err)
		assert.Equal(t, []cuda.ArgKind{cuda.Int32, cuda.Float32, cuda.Pointer, cuda.Pointer}, k.Params())
		assert.Equal(t, "saxpy", k.Name())
		assert.Same(t, mod, k.Module())
		const n = 100_003
		x, y := make([]float32, n), make([]float32, n)
		for i := range x {
			x[i], y[i] = float32(i%97)*0.25, float32(i%13)-6
		}
		dx, err := dev.MallocBytes(ctx, 4*n)
		require.NoError(t, err)
		dy, err := dev.MallocBytes(ctx, 4*n)
		require.NoError(t, err)
		upload(t, dx, x)
		upload(t, dy, y)
		s := streams.Default(dev)
		cfg := cuda.LaunchConfig{Grid: cuda.Dim((n + 255) / 256), Block: cuda.Dim(256)}
		require.NoError(t, s.Launch(ctx, k, cfg, n, float32(3), dx, dy).Wait(ctx)) // a Go int fits int n
		out := make([]float32, n)
		download(t, out, dy)
		for i := range out {
			require.Equal(t, 3*x[i]+y[i], out[i], "element %d", i)
		}

		fill, err := mod.Kernel(ctx, "fill_u32")
		require.NoError(t, err)
		s.Launch(ctx, fill, cuda.LaunchConfig{Grid: cuda.Dim(4), Block: cuda.Dim(64)}, dy, uint32(1000), int64(200))
		require.NoError(t, dev.Synchronize(ctx))
		got := make([]uint32, 201)
		download(t, got, dy)
		for i := range 200 {
			require.Equal(t, uint32(1000+i), got[i])
		}
		assert.Equal(t, math.Float32bits(out[200]), got[200], "element past n untouched")
	})
}

// TestConcurrentSaxpy runs saxpy from 64 goroutines on one device, each on its own data, and
// checks every element.
func TestConcurrentSaxpy(t *testing.T) {
	testdev.Backends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		dev := openDev(t, opts)
		k, err := saxpyModule(t, dev).Kernel(ctx, "saxpy")
		require.NoError(t, err)
		const workers, n, rounds = 64, 4099, 3
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs <- saxpyWorker(ctx, dev, k, w, n, rounds)
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
	})
}
