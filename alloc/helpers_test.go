package alloc_test

import (
	"context"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/streams"
)

const testSource = testdev.AddU32

var testSim = map[string]cuda.SimKernel{
	"add_u32": testdev.AddU32Sim,
}

type fixture struct {
	ctx  context.Context
	dev  *device.Device
	add  *device.Kernel
	opts []device.Option
}

// eachBackend runs fn on the simulator and on the GPU (skipped without one, failed without one
// when GPUACTOR_REQUIRE_GPU=1). extra options go to every Open.
func eachBackend(t *testing.T, fn func(t *testing.T, f *fixture), extra ...device.Option) {
	run := func(t *testing.T, opts []device.Option) {
		opts = append(opts, extra...)
		ctx := testdev.Ctx(t)
		dev := testdev.Open(t, ctx, opts)
		mod, err := dev.Compile(ctx, device.Source{Name: "alloc_test.cu", Code: testSource, Sim: testSim})
		require.NoError(t, err)
		add, err := mod.Kernel(ctx, "add_u32")
		require.NoError(t, err)
		fn(t, &fixture{ctx: ctx, dev: dev, add: add, opts: opts})
	}
	testdev.Backends(t, run)
}

func (f *fixture) stream(t *testing.T) *streams.Stream {
	t.Helper()
	s, err := streams.New(f.ctx, f.dev)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	return s
}

// all is every device of the machine, f.dev in its place; it skips the test when there is
// only one.
func (f *fixture) all(t *testing.T) []*device.Device { return testdev.All(t, f.ctx, f.opts, f.dev) }

func await(t *testing.T, ctx context.Context, fut *streams.Future) {
	t.Helper()
	require.NoError(t, fut.Wait(ctx))
}

// requireUsable proves the device still works: an allocation, a copy each way, a free.
func requireUsable(t *testing.T, f *fixture, s *streams.Stream) {
	t.Helper()
	b, fut, err := alloc.MallocAsync[uint32](f.ctx, s, 4)
	require.NoError(t, err)
	await(t, f.ctx, fut)
	in := []uint32{1, 2, 3, 0xdeadbeef}
	require.NoError(t, streams.CopyToDevice(f.ctx, b.Stream(), b, in).Wait(f.ctx))
	out := make([]uint32, 4)
	require.NoError(t, streams.CopyFromDevice(f.ctx, b.Stream(), out, b).Wait(f.ctx))
	require.Equal(t, in, out)
	require.NoError(t, b.Close(f.ctx))
}

// bytesOf views xs, of any element type a Buffer holds, as its bytes: streams' staged copies
// take slices of numbers only, and a Buffer[T] is T's Go layout, byte for byte.
func bytesOf[T any](xs []T) []byte {
	var zero T
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(xs))), len(xs)*int(unsafe.Sizeof(zero)))
}

func one() cuda.LaunchConfig { return cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(256)} }

// ptrOf is b's device address, which must be known.
func ptrOf(t testing.TB, b interface {
	DevicePtr(context.Context) (cuda.DevicePtr, error)
}) cuda.DevicePtr {
	t.Helper()
	p, err := b.DevicePtr(context.Background())
	require.NoError(t, err)
	return p
}
