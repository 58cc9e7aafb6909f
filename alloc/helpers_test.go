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
	"github.com/gpuactor/gpuactor/internal/testfix"
	"github.com/gpuactor/gpuactor/streams"
)

const testSource = testdev.AddU32

var testSim = map[string]cuda.SimKernel{
	"add_u32": testdev.AddU32Sim,
}

// fixture is the shared one with this package's kernel.
type fixture struct {
	*testfix.Fixture
	add *device.Kernel
}

// eachBackend runs fn on every backend (see testfix.EachBackend); extra options go to every
// Open.
func eachBackend(t *testing.T, fn func(t *testing.T, f *fixture), extra ...device.Option) {
	src := device.Source{Name: "alloc_test.cu", Code: testSource, Sim: testSim}
	testfix.EachBackend(t, src, func(t *testing.T, tf *testfix.Fixture) {
		fn(t, &fixture{Fixture: tf, add: tf.Kernel(t, "add_u32")})
	}, extra...)
}

// requireStreamUsable proves s and the stream-ordered allocator still work after a mistake:
// an allocation on s, a copy each way, a free. testdev.RequireUsable checks the device alone.
func requireStreamUsable(t *testing.T, f *fixture, s *streams.Stream) {
	t.Helper()
	b, fut, err := alloc.MallocAsync[uint32](f.Ctx, s, 4)
	require.NoError(t, err)
	testfix.Await(t, f.Ctx, fut)
	in := []uint32{1, 2, 3, 0xdeadbeef}
	require.NoError(t, streams.CopyToDevice(f.Ctx, b.Stream(), b, in).Wait(f.Ctx))
	out := make([]uint32, 4)
	require.NoError(t, streams.CopyFromDevice(f.Ctx, b.Stream(), out, b).Wait(f.Ctx))
	require.Equal(t, in, out)
	require.NoError(t, b.Close(f.Ctx))
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
