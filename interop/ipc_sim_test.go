package interop_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/interop"
	"github.com/gpuactor/gpuactor/sim"
	"github.com/gpuactor/gpuactor/streams"
)

// requireIPCNotSupported checks the simulator's answer to every IPC call.
func requireIPCNotSupported(t *testing.T, err error) {
	t.Helper()
	require.ErrorIs(t, err, interop.ErrIPCNotSupported)
	require.ErrorIs(t, err, cudaerr.NotSupported)
}

// TestIPCSimNotSupported: every IPC call on the simulator fails with the documented error and
// the device stays usable.
func TestIPCSimNotSupported(t *testing.T) {
	ctx := testdev.Ctx(t)
	dev := testdev.Open(t, ctx, []device.Option{device.WithSimulator(sim.New())})

	buf, err := dev.MallocBytes(ctx, 4096)
	require.NoError(t, err)
	_, err = interop.ExportMemory(ctx, buf)
	requireIPCNotSupported(t, err)
	_, err = interop.OpenMemory(ctx, dev, interop.MemHandle{1, 2, 3}, 4096)
	requireIPCNotSupported(t, err)

	ev, err := streams.NewEvent(ctx, dev, streams.Interprocess, streams.DisableTiming)
	require.NoError(t, err)
	_, err = interop.ExportEvent(ctx, ev)
	requireIPCNotSupported(t, err)
	_, err = interop.OpenEvent(ctx, dev, interop.EventHandle{1})
	requireIPCNotSupported(t, err)

	pool, err := alloc.NewPool(ctx, dev, alloc.ExportAs(alloc.HandlePosixFD))
	require.NoError(t, err)
	_, err = interop.ExportPool(ctx, pool)
	requireIPCNotSupported(t, err)
	f := tempFile(t, "not a pool")
	_, err = interop.ImportPool(ctx, dev, f)
	requireIPCNotSupported(t, err)
	s, err := streams.New(ctx, dev)
	require.NoError(t, err)
	pb, _, err := alloc.MallocAsync[uint32](ctx, s, 256, alloc.FromPool(pool))
	require.NoError(t, err)
	_, err = interop.ExportPointer(ctx, pb)
	requireIPCNotSupported(t, err)

	// The device is still usable: memory, events, pools and streams work as before.
	require.NoError(t, s.Memset(ctx, buf, 0x5a).Wait(ctx))
	got := make([]byte, 4096)
	testdev.Read(t, ctx, got, buf)
	require.Equal(t, bytes.Repeat([]byte{0x5a}, 4096), got)
	require.NoError(t, s.Record(ctx, ev).Wait(ctx))
	require.NoError(t, pb.Close(ctx))
	require.NoError(t, s.Synchronize(ctx))
	require.NoError(t, pool.Close(ctx))
	require.NoError(t, ev.Close(ctx))
	require.NoError(t, buf.Close(ctx))
	require.NoError(t, s.Close(ctx))
}

// TestIPCBadInput: arguments refused before the runtime is asked, on either backend.
func TestIPCBadInput(t *testing.T) {
	testdev.Backends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		dev := testdev.Open(t, ctx, opts)
		buf, err := dev.MallocBytes(ctx, 4096)
		require.NoError(t, err)

		_, err = interop.ExportMemory(ctx, nil)
		require.ErrorIs(t, err, device.ErrInvalidArgument)
		_, err = interop.ExportMemory(ctx, buf.Slice(16, 64))
		require.ErrorIs(t, err, device.ErrInvalidArgument, "a slice cannot be exported")
		_, err = interop.OpenMemory(ctx, nil, interop.MemHandle{}, 16)
		require.ErrorIs(t, err, device.ErrInvalidArgument)
		_, err = interop.OpenMemory(ctx, dev, interop.MemHandle{}, 0)
		require.ErrorIs(t, err, device.ErrInvalidArgument)

		s, err := streams.New(ctx, dev)
		require.NoError(t, err)
		defer func() { require.NoError(t, s.Close(ctx)) }()
		async, _, err := alloc.MallocAsync[uint32](ctx, s, 16)
		require.NoError(t, err)
		_, err = interop.ExportMemory(ctx, async)
		require.ErrorIs(t, err, device.ErrInvalidArgument, "stream-ordered memory goes through ExportPointer")
		_, err = interop.ExportPointer(ctx, buf)
		require.ErrorIs(t, err, device.ErrInvalidArgument, "cudaMalloc memory goes through ExportMemory")
		require.NoError(t, async.Close(ctx))
		_, err = interop.ExportPointer(ctx, nil)
		require.ErrorIs(t, err, device.ErrInvalidArgument)

		timed, err := streams.NewEvent(ctx, dev)
		require.NoError(t, err)
		_, err = interop.ExportEvent(ctx, timed)
		require.ErrorIs(t, err, device.ErrInvalidArgument, "an event without Interprocess cannot be exported")
		_, err = interop.ExportEvent(ctx, nil)
		require.ErrorIs(t, err, device.ErrInvalidArgument)
		_, err = interop.OpenEvent(ctx, nil, interop.EventHandle{})
		require.ErrorIs(t, err, device.ErrInvalidArgument)

		_, err = interop.ExportPool(ctx, nil)
		require.ErrorIs(t, err, device.ErrInvalidArgument)
		_, err = interop.ImportPool(ctx, dev, nil)
		require.ErrorIs(t, err, device.ErrInvalidArgument)
		_, err = interop.ImportPool(ctx, nil, tempFile(t, "x"))
		require.ErrorIs(t, err, device.ErrInvalidArgument)
		_, err = interop.ImportPointer(ctx, nil, interop.PoolPointer{}, 16)
		require.ErrorIs(t, err, device.ErrInvalidArgument)

		require.NoError(t, buf.Close(ctx))
		_, err = interop.ExportMemory(ctx, buf)
		require.ErrorIs(t, err, device.ErrClosed)
	})
}
