package device_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/streams"
)

// TestBadInput checks that each mistake gets an error naming it, and that the device keeps
// working afterwards.
func TestBadInput(t *testing.T) {
	testdev.Backends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		dev := openDev(t, opts)
		other := openDev(t, opts) // a second actor on the same ordinal: a distinct Device
		mod := saxpyModule(t, dev)
		saxpy, err := mod.Kernel(ctx, "saxpy")
		require.NoError(t, err)
		buf, err := dev.MallocBytes(ctx, 400)
		require.NoError(t, err)
		foreign, err := other.MallocBytes(ctx, 400)
		require.NoError(t, err)
		freed, err := dev.MallocBytes(ctx, 400)
		require.NoError(t, err)
		require.NoError(t, freed.Close(ctx))
		one := cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(128)}
		p := dev.Properties()
		s, so := streams.Default(dev), streams.Default(other)
		launch := func(s *streams.Stream, k *device.Kernel, cfg cuda.LaunchConfig, args ...any) error {
			return s.Launch(ctx, k, cfg, args...).Wait(ctx)
		}
		toDevice := func(dst device.Mem, src []float32) error { return streams.CopyToDevice(ctx, s, dst, src).Wait(ctx) }

		cases := []struct {
			name string
			run  func() error
			want error
			text string
		}{
			{"nil source slice", func() error { return toDevice(buf, nil) }, device.ErrInvalidArgument, "nil slice"},
			{"empty source slice", func() error { return toDevice(buf, []float32{}) }, device.ErrInvalidArgument, "empty"},
			{"nil destination slice", func() error { return streams.CopyFromDevice[float32](ctx, s, nil, buf).Wait(ctx) }, device.ErrInvalidArgument, "nil slice"},
			{"nil buffer", func() error { return toDevice((*device.Buffer)(nil), []float32{1}) }, device.ErrInvalidArgument, "nil buffer"},
			{"nil Mem", func() error { return toDevice(nil, []float32{1}) }, device.ErrInvalidArgument, "nil"},
			{"source larger than buffer", func() error { return toDevice(buf, make([]float32, 101)) }, device.ErrOutOfRange, "404 bytes into a 400-byte"},
			{"destination larger than buffer", func() error { return streams.CopyFromDevice(ctx, s, make([]float64, 51), buf).Wait(ctx) }, device.ErrOutOfRange, "408 bytes from a 400-byte"},
			{"slice past the end", func() error { return s.Memset(ctx, buf.Slice(390, 16), 0).Wait(ctx) }, device.ErrOutOfRange, "runs past the end"},
			{"slice offset past the end", func() error { return s.Memset(ctx, buf.Slice(401, 1), 0).Wait(ctx) }, device.ErrOutOfRange, "runs past the end"},
			{"device copy larger than destination", func() error { return s.Copy(ctx, buf.Slice(0, 8), buf.Slice(8, 16)).Wait(ctx) }, device.ErrOutOfRange, "16 bytes into a 8-byte"},
			{"double close", func() error { return freed.Close(ctx) }, device.ErrClosed, "closed twice"},
			{"use after close: copy in", func() error { return toDevice(freed, []float32{1}) }, device.ErrClosed, "used after Close"},
			{"use after close: copy out", func() error { return streams.CopyFromDevice(ctx, s, make([]byte, 4), freed).Wait(ctx) }, device.ErrClosed, "used after Close"},
			{"use after close: kernel argument", func() error { return launch(s, saxpy, one, int32(1), float32(1), freed, buf) }, device.ErrClosed, "used after Close"},
			{"buffer of another device: peer copy from a closed buffer", func() error { return so.Copy(ctx, foreign, freed).Wait(ctx) }, device.ErrClosed, "used after Close"},
			{"buffer of another device: argument", func() error { return launch(s, saxpy, one, int32(1), float32(1), foreign, buf) }, device.ErrWrongDevice, "launched on device"},
			{"kernel of another device", func() error { return launch(so, saxpy, one, int32(1), float32(1), buf, buf) }, device.ErrWrongDevice, "was loaded on another opening of device"},
			{"too few arguments", func() error { return launch(s, saxpy, one, int32(1), float32(1), buf) }, device.ErrKernelArgs, "takes 4 argument(s) (int32, float32, pointer, pointer), got 3"},
			{"too many arguments", func() error { return launch(s, saxpy, one, int32(1), float32(1), buf, buf, buf) }, device.ErrKernelArgs, "got 5"},
			{"wrong argument kind", func() error { return launch(s, saxpy, one, int32(1), 2.0, buf, buf) }, device.ErrKernelArgs, "argument 1 is float32, got float64"},
			{"pointer where a scalar goes", func() error { return launch(s, saxpy, one, buf, float32(1), buf, buf) }, device.ErrKernelArgs, "argument 0 is int32, got pointer"},
			{"unsupported Go type", func() error { return launch(s, saxpy, one, "n", float32(1), buf, buf) }, device.ErrKernelArgs, "unsupported Go type string"},
			{"Go int that does not fit", func() error { return launch(s, saxpy, one, 1<<40, float32(1), buf, buf) }, device.ErrKernelArgs, "does not fit"},
			{"nil kernel", func() error { return launch(s, nil, one) }, device.ErrInvalidArgument, "nil kernel"},
			{"zero block", func() error {
				return launch(s, saxpy, cuda.LaunchConfig{Grid: cuda.Dim(1)}, int32(1), float32(1), buf, buf)
			}, device.ErrLaunchConfig, "no zero extent"},
			{"block too large", func() error {
				return launch(s, saxpy, cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(uint32(p.MaxThreadsPerBlock) * 2)}, int32(1), float32(1), buf, buf)
			}, device.ErrLaunchConfig, "exceeds the device's maximum block"},
			{"too many threads per block", func() error {
				return launch(s, saxpy, cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(64, 64)}, int32(1), float32(1), buf, buf)
			}, device.ErrLaunchConfig, "4096 threads"},
			{"grid too large", func() error {
				return launch(s, saxpy, cuda.LaunchConfig{Grid: cuda.Dim(1, p.MaxGrid.Y+1), Block: cuda.Dim(32)}, int32(1), float32(1), buf, buf)
			}, device.ErrLaunchConfig, "exceeds the device's maximum grid"},
			{"too much shared memory", func() error {
				return launch(s, saxpy, cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(32), SharedMem: 1 << 30}, int32(1), float32(1), buf, buf)
			}, device.ErrLaunchConfig, "shared memory"},
			{"unknown kernel", func() error { _, err := mod.Kernel(ctx, "nope"); return err }, device.ErrNoKernel, `"nope"`},
			{"zero-byte Malloc", func() error { _, err := dev.MallocBytes(ctx, 0); return err }, device.ErrInvalidArgument, "0 bytes"},
			{"bad ordinal", func() error { _, err := device.Open(ctx, 99, opts...); return err }, device.ErrInvalidArgument, "ordinal 99"},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				err := c.run()
				require.Error(t, err)
				assert.ErrorIs(t, err, c.want)
				assert.Contains(t, err.Error(), c.text)
				testdev.RequireUsable(t, dev)
			})
		}
	})
}

func TestCompileErrorCarriesLog(t *testing.T) {
	testdev.Backends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		dev := openDev(t, opts)
		_, err := dev.Compile(ctx, device.Source{Name: "broken.cu", Code: "extern \"C\" __global__ void k(int n) { undeclared_thing = n; }\n"})
		if dev.Backend() == device.BackendSim && err == nil {
			t.Skip("NVRTC not installed: the simulator cannot check CUDA syntax")
		}
		require.Error(t, err)
		require.ErrorIs(t, err, device.ErrCompile)
		var ce *device.CompileError
		require.ErrorAs(t, err, &ce)
		assert.Contains(t, ce.Log, "undeclared_thing")
		assert.Contains(t, ce.Log, "broken.cu")
		_, err = dev.Compile(ctx, device.Source{Name: "empty.cu", Code: "  "})
		require.ErrorIs(t, err, device.ErrInvalidArgument)
		testdev.RequireUsable(t, dev)
	})
}

func TestOutOfMemoryLeavesDeviceUsable(t *testing.T) {
	testdev.Backends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		dev := openDev(t, opts)
		_, err := dev.MallocBytes(ctx, dev.Properties().TotalMemory*2)
		require.Error(t, err)
		assert.ErrorIs(t, err, cudaerr.MemoryAllocation)
		assert.NoError(t, dev.Err(), "out of memory is not sticky")
		testdev.RequireUsable(t, dev)
	})
}

func TestCancelledCallerLeavesDeviceUsable(t *testing.T) {
	testdev.Backends(t, func(t *testing.T, opts []device.Option) {
		dev := openDev(t, opts)
		ctx, cancel := context.WithCancel(testdev.Ctx(t))
		cancel()
		_, err := dev.MallocBytes(ctx, 64)
		require.ErrorIs(t, err, context.Canceled)
		err = streams.CopyToDevice(ctx, streams.Default(dev), mustMalloc(t, dev, 64), []byte{1}).Wait(ctx)
		require.True(t, errors.Is(err, context.Canceled), "got %v", err)
		err = streams.Default(dev).Memset(ctx, mustMalloc(t, dev, 64), 1).Wait(ctx)
		require.True(t, errors.Is(err, context.Canceled), "got %v", err)
		testdev.RequireUsable(t, dev)
	})
}

func TestClosedDevice(t *testing.T) {
	testdev.Backends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		dev, err := device.Open(ctx, 0, opts...)
		require.NoError(t, err)
		leaked := mustMalloc(t, dev, 1<<20) // Close frees what the caller forgot
		_ = leaked
		require.NoError(t, dev.Close())
		require.NoError(t, dev.Close(), "Close is idempotent")
		_, err = dev.MallocBytes(ctx, 64)
		require.ErrorIs(t, err, device.ErrClosed)
		assert.True(t, leaked.Closed())
		require.ErrorIs(t, leaked.Close(ctx), device.ErrClosed, "a closed device's buffer")
		require.ErrorIs(t, streams.Default(dev).Synchronize(ctx), device.ErrClosed)
	})
}

// TestStickyFaultOnSim: a kernel fault fails the device for good, as on a GPU. Only on the
// simulator: a real fault would poison the GPU's context for the rest of this process.
func TestStickyFaultOnSim(t *testing.T) {
	ctx := testdev.Ctx(t)
	dev := openDev(t, []device.Option{device.WithBackend(device.BackendSim), device.WithKernelCache("")})
	k := testdev.OOBKernel(t, ctx, dev)
	buf := mustMalloc(t, dev, 16)
	err := streams.Default(dev).Launch(ctx, k, cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(1)}, buf, int32(4)).Wait(ctx)
	require.Error(t, err)
	assert.ErrorIs(t, err, cudaerr.IllegalAddress)
	require.ErrorIs(t, dev.Err(), device.ErrDeviceFailed)
	_, err = dev.MallocBytes(ctx, 16)
	assert.ErrorIs(t, err, device.ErrDeviceFailed)
	assert.ErrorIs(t, err, cudaerr.IllegalAddress)
}
