package collective

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/internal/testgpu"
	"github.com/gpuactor/gpuactor/streams"
)

// cudaRanks opens every CUDA device (at least min of them: fewer skips the test, even
// under GPUACTOR_REQUIRE_GPU=1, since the host cannot run it), checks that libnccl loads
// (under GPUACTOR_REQUIRE_GPU=1 a missing library fails the test), and returns a stream
// per device.
func cudaRanks(t testing.TB, ctx context.Context, min int, extra ...device.Option) ([]*device.Device, []*streams.Stream) {
	t.Helper()
	testgpu.Need(t, testdev.GPU(), "the cuda backend sees no device")
	opts := append([]device.Option{device.WithBackend(device.BackendCUDA)}, extra...)
	n, err := device.Count(ctx, opts...)
	require.NoError(t, err)
	if n < min {
		t.Skipf("needs %d GPUs, the host has %d", min, n)
	}
	devs := make([]*device.Device, n)
	ss := make([]*streams.Stream, n)
	for i := range devs {
		devs[i], err = device.Open(ctx, i, opts...)
		require.NoError(t, err)
		d := devs[i]
		t.Cleanup(func() { require.NoError(t, d.Close()) })
		ss[i], err = streams.New(ctx, d)
		require.NoError(t, err)
	}
	v, err := Version(ctx, devs[0])
	testgpu.Need(t, err == nil, fmt.Sprintf("libnccl does not load: %v", err))
	t.Logf("NCCL %d on %d devices", v, n)
	return devs, ss
}

func upload[T Elem](t testing.TB, ctx context.Context, s *streams.Stream, data []T) *alloc.Buffer[T] {
	t.Helper()
	b, err := alloc.Malloc[T](ctx, s, len(data))
	require.NoError(t, err)
	require.NoError(t, b.CopyIn(ctx, data))
	t.Cleanup(func() { _ = b.Close(context.Background()) })
	return b
}

func zeros[T Elem](t testing.TB, ctx context.Context, s *streams.Stream, n int) *alloc.Buffer[T] {
	return upload(t, ctx, s, make([]T, n))
}

func download[T Elem](t *testing.T, ctx context.Context, b *alloc.Buffer[T]) []T {
	t.Helper()
	out := make([]T, b.Len())
	require.NoError(t, b.CopyOut(ctx, out))
	return out
}

func waitAll(t testing.TB, ctx context.Context, fs ...*streams.Future) {
	t.Helper()
	ws := make([]actor.Waiter, len(fs))
	for i, f := range fs {
		ws[i] = f
	}
	require.NoError(t, actor.WaitAll(ctx, ws...))
}

// closeComms closes every rank concurrently: a finalize may wait for its peers.
func closeComms(t testing.TB, ctx context.Context, comms []*Comm) {
	t.Helper()
	errs := make(chan error, len(comms))
	for _, c := range comms {
		go func() { errs <- c.Close(ctx) }()
	}
	for range comms {
		require.NoError(t, <-errs)
	}
}
