package collective

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/streams"
)

func TestBadInputIsRefusedBeforeNCCL(t *testing.T) {
	ctx := testdev.Ctx(t)
	devs, hub := fakeDevices(t, ctx, 2)
	comms, err := NewLocal(ctx, devs)
	require.NoError(t, err)
	defer closeAll(t, comms)
	c := comms[0] // rank 0 of 2, on device 0
	s0, s1 := streams.Default(devs[0]), streams.Default(devs[1])
	mk := func(s *streams.Stream, n int) *alloc.Buffer[float32] {
		b, err := alloc.Malloc[float32](ctx, s, n)
		require.NoError(t, err)
		t.Cleanup(func() { _ = b.Close(ctx) })
		return b
	}
	a4, b4, b7, b8, other := mk(s0, 4), mk(s0, 4), mk(s0, 7), mk(s0, 8), mk(s1, 4)
	closed := mk(s0, 4)
	require.NoError(t, closed.Close(ctx))

	cases := []struct {
		name string
		op   Op
		want error
		text string
	}{
		{"nil comm", AllReduceOp(s0, nil, a4, b4, Sum), device.ErrInvalidArgument, "nil communicator"},
		{"nil stream", AllReduceOp(nil, c, a4, b4, Sum), device.ErrInvalidArgument, "nil stream"},
		{"stream of another device", AllReduceOp(s1, c, a4, b4, Sum), device.ErrWrongDevice, "stream of device 1"},
		{"buffer of another device", AllReduceOp(s0, c, other, b4, Sum), device.ErrWrongDevice, "send buffer is on device 1"},
		{"nil send", AllReduceOp(s0, c, nil, b4, Sum), device.ErrInvalidArgument, "send buffer is nil"},
		{"receive too short", AllReduceOp(s0, c, b8, a4, Sum), device.ErrOutOfRange, "holds 4 elements, 8 needed"},
		{"bad reduction", AllReduceOp(s0, c, a4, b4, Reduction(9)), device.ErrInvalidArgument, "Reduction(9)"},
		{"all-gather receive under count × ranks", AllGatherOp(s0, c, a4, b7), device.ErrOutOfRange, "8 needed"},
		{"reduce-scatter send under count × ranks", ReduceScatterOp(s0, c, b7, a4, Sum), device.ErrOutOfRange, "8 needed"},
		{"broadcast root out of range", BroadcastOp(s0, c, a4, b4, 2), device.ErrOutOfRange, "root 2"},
		{"broadcast root without send", BroadcastOp(s0, c, nil, b4, 0), device.ErrInvalidArgument, "send buffer is nil"},
		{"reduce root without receive", ReduceOp(s0, c, a4, nil, Sum, 0), device.ErrInvalidArgument, "receive buffer is nil"},
		{"reduce negative root", ReduceOp(s0, c, a4, b4, Sum, -1), device.ErrOutOfRange, "root -1"},
		{"send to a peer out of range", SendOp(s0, c, a4, 5), device.ErrOutOfRange, "peer 5"},
		{"recv of nil", RecvOp[float32](s0, c, nil, 1), device.ErrInvalidArgument, "receive buffer is nil"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Error(t, tc.op.Err())
			err := Launch(ctx, tc.op).Wait(ctx)
			assert.ErrorIs(t, err, tc.want)
			assert.Contains(t, err.Error(), tc.text)
		})
	}
	// A freed buffer is found on the actor thread, before NCCL.
	err = AllReduce(ctx, s0, c, closed, b4, Sum).Wait(ctx)
	assert.ErrorIs(t, err, device.ErrClosed)

	assert.Empty(t, hub.get(c).launches, "nothing reached NCCL")
	usable(t, ctx, devs[0])
	// And the communicator still works.
	require.NoError(t, AllReduce(ctx, s0, c, a4, b4, Sum).Wait(ctx))
}

func TestBadGroupsLaunchNothing(t *testing.T) {
	ctx := testdev.Ctx(t)
	devs, hub := fakeDevices(t, ctx, 2)
	comms, err := NewLocal(ctx, devs)
	require.NoError(t, err)
	defer closeAll(t, comms)
	var empty Group
	assert.ErrorIs(t, empty.Run(ctx), device.ErrInvalidArgument)

	s0 := streams.Default(devs[0])
	s0b, err := streams.New(ctx, devs[0])
	require.NoError(t, err)
	defer s0b.Close(ctx)
	s1 := streams.Default(devs[1])
	b0, err := alloc.Malloc[int64](ctx, s0, 4)
	require.NoError(t, err)
	b1, err := alloc.Malloc[int64](ctx, s1, 4)
	require.NoError(t, err)

	var g Group
	g.Add(SendOp(s0, comms[0], b0, 1), RecvOp(s1, comms[1], b1, 0), RecvOp(s0b, comms[0], b0, 1))
	fs := g.Launch(ctx)
	for _, f := range fs {
		assert.ErrorIs(t, f.Wait(ctx), device.ErrInvalidArgument)
	}
	var g2 Group
	g2.Add(SendOp(s0, comms[0], b0, 1), RecvOp(s1, comms[1], b1, 7))
	assert.ErrorIs(t, g2.Run(ctx), device.ErrOutOfRange)
	assert.Empty(t, hub.get(comms[0]).launches, "a bad group launches no rank")
	assert.Empty(t, hub.get(comms[1]).launches)
}

func TestBadJoinArguments(t *testing.T) {
	ctx := testdev.Ctx(t)
	devs, _ := fakeDevices(t, ctx, 2)
	var id ID
	_, err := Join(ctx, nil, id, 2, 0)
	assert.ErrorIs(t, err, device.ErrInvalidArgument)
	_, err = Join(ctx, devs[0], id, 0, 0)
	assert.ErrorIs(t, err, device.ErrInvalidArgument)
	_, err = Join(ctx, devs[0], id, 2, 2)
	assert.ErrorIs(t, err, device.ErrOutOfRange)
	for _, o := range []Option{WithCTAs(0, 4), WithCTAs(8, 4), WithClusterSize(0), WithClusterSize(9), WithNetName("a\x00b")} {
		_, err = Join(ctx, devs[0], id, 1, 0, o)
		assert.ErrorIs(t, err, device.ErrInvalidArgument)
	}
	_, err = NewLocal(ctx, nil)
	assert.ErrorIs(t, err, device.ErrInvalidArgument)
	_, err = NewLocal(ctx, []*device.Device{devs[0], nil})
	assert.ErrorIs(t, err, device.ErrInvalidArgument)
	_, err = NewLocal(ctx, []*device.Device{devs[0], devs[1], devs[0]})
	assert.ErrorIs(t, err, device.ErrInvalidArgument)
	_, err = NewID(ctx, nil)
	assert.ErrorIs(t, err, device.ErrInvalidArgument)
	var nilComm *Comm
	assert.ErrorIs(t, nilComm.Close(ctx), device.ErrInvalidArgument)
	_, err = nilComm.Split(ctx, 0, 0)
	assert.ErrorIs(t, err, device.ErrInvalidArgument)
	usable(t, ctx, devs[0])
}

func TestNoNCCLOnTheCUDABackendIsErrNoNCCL(t *testing.T) {
	if !testdev.GPU() {
		t.Skip("needs the cuda backend; the library search itself is tested in internal/nccl")
	}
	t.Setenv("GPUACTOR_NCCL", "/nonexistent/libnccl.so.2")
	ctx := testdev.Ctx(t)
	dev, err := device.Open(ctx, 0, device.WithBackend(device.BackendCUDA))
	require.NoError(t, err)
	defer dev.Close()
	if _, err := Version(ctx, dev); err == nil {
		t.Skip("libnccl was loaded already in this process")
	}
	_, err = NewID(ctx, dev)
	assert.ErrorIs(t, err, ErrNoNCCL)
	assert.Contains(t, err.Error(), "/nonexistent/libnccl.so.2")
	usable(t, ctx, dev)
}
