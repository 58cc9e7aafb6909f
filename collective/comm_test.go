package collective

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/internal/testleak"
	"github.com/gpuactor/gpuactor/streams"
)

func TestNewLocalJoinsEveryRankConcurrently(t *testing.T) {
	ctx := testdev.Ctx(t)
	devs, hub := fakeDevices(t, ctx, 3)
	comms, err := NewLocal(ctx, devs)
	require.NoError(t, err)
	require.Len(t, comms, 3)
	for i, c := range comms {
		assert.Equal(t, i, c.Rank())
		assert.Equal(t, 3, c.Count())
		assert.Same(t, devs[i], c.Device())
		assert.NoError(t, c.Err(ctx))
	}
	// Each rank's join was polled until the last rank joined: none could finish alone.
	assert.Greater(t, hub.polls, 3)
	for _, c := range comms {
		require.NoError(t, c.Close(ctx))
		rec := hub.get(c)
		assert.True(t, rec.finalized)
		assert.True(t, rec.destroyed)
		assert.False(t, rec.aborted)
		assert.NoError(t, c.Close(ctx), "a second Close does nothing")
	}
}

func TestJoinWithoutItsPeersAbortsAtTheDeadline(t *testing.T) {
	ctx := testdev.Ctx(t)
	devs, hub := fakeDevices(t, ctx, 2)
	id, err := NewID(ctx, devs[0])
	require.NoError(t, err)
	base := testleak.Base()

	short, cancel := context.WithTimeout(ctx, 30*time.Millisecond)
	defer cancel()
	c, err := Join(short, devs[0], id, 2, 0) // rank 1 never comes
	require.Error(t, err)
	assert.Nil(t, c)
	assert.ErrorIs(t, err, ErrAborted)
	assert.ErrorIs(t, err, context.DeadlineExceeded)

	hub.mu.Lock()
	var aborted int
	for _, fc := range hub.comms {
		if fc.aborted {
			aborted++
		}
	}
	hub.mu.Unlock()
	assert.Equal(t, 1, aborted, "the half-made rank was aborted")
	testleak.Settle(t, base) // nothing is left polling
	usable(t, ctx, devs[0])
}

func TestJoinReportsNCCLFailureAndAborts(t *testing.T) {
	ctx := testdev.Ctx(t)
	devs, hub := fakeDevices(t, ctx, 1)
	hub.failAt = &backend.CollError{Code: backend.CollRemoteError, Call: "ncclCommInitRankConfig", Detail: "peer gone"}
	id, err := NewID(ctx, devs[0])
	require.NoError(t, err)
	_, err = Join(ctx, devs[0], id, 1, 0)
	var ce *Error
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, CodeRemoteError, ce.Code)
	assert.Contains(t, err.Error(), "peer gone")
	usable(t, ctx, devs[0])
}

func TestNewLocalAbortsEveryRankWhenCtxEnds(t *testing.T) {
	ctx := testdev.Ctx(t)
	devs, hub := fakeDevices(t, ctx, 2)
	hub.failAt = backend.ErrCollInProgress // never ready
	base := testleak.Base()
	short, cancel := context.WithTimeout(ctx, 30*time.Millisecond)
	defer cancel()
	_, err := NewLocal(short, devs)
	require.ErrorIs(t, err, ErrAborted)
	hub.mu.Lock()
	for _, fc := range hub.comms {
		assert.True(t, fc.aborted)
	}
	n := len(hub.comms)
	hub.mu.Unlock()
	assert.Equal(t, 2, n)
	testleak.Settle(t, base)
}

func TestAbortRefusesLaterOperations(t *testing.T) {
	ctx := testdev.Ctx(t)
	devs, hub := fakeDevices(t, ctx, 2)
	comms, err := NewLocal(ctx, devs)
	require.NoError(t, err)
	s := streams.Default(devs[0])
	buf, err := alloc.Malloc[float32](ctx, s, 8)
	require.NoError(t, err)
	defer buf.Close(ctx)

	require.NoError(t, comms[0].Abort(ctx))
	require.NoError(t, comms[0].Abort(ctx), "twice does nothing")
	assert.True(t, hub.get(comms[0]).aborted)
	err = AllReduce(ctx, s, comms[0], buf, buf, Sum).Wait(ctx)
	assert.ErrorIs(t, err, ErrAborted)
	assert.ErrorIs(t, comms[0].Err(ctx), ErrAborted)
	assert.NoError(t, comms[0].Close(ctx), "Close after Abort does nothing")
	assert.False(t, hub.get(comms[0]).destroyed)
	require.NoError(t, comms[1].Abort(ctx))
	usable(t, ctx, devs[0])
}

func TestOperationsReachNCCLWithTheirArguments(t *testing.T) {
	ctx := testdev.Ctx(t)
	devs, hub := fakeDevices(t, ctx, 2)
	comms, err := NewLocal(ctx, devs)
	require.NoError(t, err)
	defer closeAll(t, comms)
	s := streams.Default(devs[1])
	c := comms[1]
	send, err := alloc.Malloc[int32](ctx, s, 6)
	require.NoError(t, err)
	recv, err := alloc.Malloc[int32](ctx, s, 12)
	require.NoError(t, err)
	sp, _ := send.DevicePtr(ctx)
	rp, _ := recv.DevicePtr(ctx)

	require.NoError(t, AllReduce(ctx, s, c, send, recv, Max).Wait(ctx))
	require.NoError(t, AllGather(ctx, s, c, send, recv).Wait(ctx))
	require.NoError(t, ReduceScatter(ctx, s, c, recv, send, Avg).Wait(ctx))
	require.NoError(t, Broadcast(ctx, s, c, nil, recv, 0).Wait(ctx), "off the root no send buffer is needed")
	require.NoError(t, Reduce(ctx, s, c, send, nil, Prod, 0).Wait(ctx), "off the root no receive buffer is needed")

	got := hub.get(c).launches
	require.Len(t, got, 5)
	assert.Equal(t, backend.CollOp{Kind: backend.CollAllReduce, Send: sp, Recv: rp, Count: 6, Type: backend.CollInt32, Op: backend.CollMax}, got[0][0])
	assert.Equal(t, backend.CollOp{Kind: backend.CollAllGather, Send: sp, Recv: rp, Count: 6, Type: backend.CollInt32}, got[1][0])
	assert.Equal(t, backend.CollOp{Kind: backend.CollReduceScatter, Send: rp, Recv: sp, Count: 6, Type: backend.CollInt32, Op: backend.CollAvg}, got[2][0])
	assert.Equal(t, backend.CollOp{Kind: backend.CollBroadcast, Recv: rp, Count: 12, Type: backend.CollInt32}, got[3][0])
	assert.Equal(t, backend.CollOp{Kind: backend.CollReduce, Send: sp, Count: 6, Type: backend.CollInt32, Op: backend.CollProd}, got[4][0])
}

func TestAnOperationLeftInProgressIsWaitedForOnTheActor(t *testing.T) {
	ctx := testdev.Ctx(t)
	devs, hub := fakeDevices(t, ctx, 2)
	comms, err := NewLocal(ctx, devs)
	require.NoError(t, err)
	defer closeAll(t, comms)
	s := streams.Default(devs[0])
	buf, err := alloc.Malloc[float64](ctx, s, 4)
	require.NoError(t, err)
	hub.mu.Lock()
	hub.pending = 3
	before := hub.polls
	hub.mu.Unlock()
	require.NoError(t, AllReduce(ctx, s, comms[0], buf, buf, Sum).Wait(ctx))
	hub.mu.Lock()
	assert.GreaterOrEqual(t, hub.polls-before, 4, "polled until NCCL was done")
	hub.pending = 0
	hub.mu.Unlock()
}

func TestAbortEndsAWaitOnTheActor(t *testing.T) {
	ctx := testdev.Ctx(t)
	devs, hub := fakeDevices(t, ctx, 2)
	comms, err := NewLocal(ctx, devs)
	require.NoError(t, err)
	s := streams.Default(devs[0])
	buf, err := alloc.Malloc[float64](ctx, s, 4)
	require.NoError(t, err)
	hub.mu.Lock()
	hub.pending = 1 << 30 // the peer never arrives
	hub.mu.Unlock()
	f := AllReduce(ctx, s, comms[0], buf, buf, Sum)
	require.Eventually(t, func() bool { return len(hub.get(comms[0]).launches) == 1 }, 10*time.Second, time.Millisecond)
	require.NoError(t, comms[0].Abort(ctx))
	assert.ErrorIs(t, f.Wait(ctx), ErrAborted)
	assert.True(t, hub.get(comms[0]).aborted)
	require.NoError(t, comms[1].Abort(ctx))
	usable(t, ctx, devs[0])
}

func TestGroupSendsEachRanksOpsAsOneLaunch(t *testing.T) {
	ctx := testdev.Ctx(t)
	devs, hub := fakeDevices(t, ctx, 3)
	comms, err := NewLocal(ctx, devs)
	require.NoError(t, err)
	defer closeAll(t, comms)
	// An all-to-all: every rank sends one block to every other and receives one from each.
	var g Group
	for r, c := range comms {
		s := streams.Default(devs[r])
		for p := range comms {
			if p == r {
				continue
			}
			out, err := alloc.Malloc[uint64](ctx, s, 2)
			require.NoError(t, err)
			in, err := alloc.Malloc[uint64](ctx, s, 2)
			require.NoError(t, err)
			g.Add(SendOp(s, c, out, p), RecvOp(s, c, in, p))
		}
	}
	assert.Equal(t, 12, g.Len())
	require.NoError(t, g.Run(ctx))
	for r, c := range comms {
		got := hub.get(c).launches
		require.Len(t, got, 1, "rank %d's ops went as one group", r)
		require.Len(t, got[0], 4)
		var sendTo, recvFrom []int32
		for _, op := range got[0] {
			assert.Equal(t, backend.CollUint64, op.Type)
			assert.EqualValues(t, 2, op.Count)
			if op.Kind == backend.CollSend {
				sendTo = append(sendTo, op.Peer)
			} else {
				assert.Equal(t, backend.CollRecv, op.Kind)
				recvFrom = append(recvFrom, op.Peer)
			}
		}
		assert.ElementsMatch(t, others(r, 3), sendTo, "rank %d sends to every other rank", r)
		assert.ElementsMatch(t, others(r, 3), recvFrom, "rank %d receives from every other rank", r)
	}
}

func others(r, n int) []int32 {
	var out []int32
	for i := range n {
		if i != r {
			out = append(out, int32(i))
		}
	}
	return out
}

func TestFinalizeThenOperationsAreRefused(t *testing.T) {
	ctx := testdev.Ctx(t)
	devs, _ := fakeDevices(t, ctx, 1)
	comms, err := NewLocal(ctx, devs)
	require.NoError(t, err)
	c := comms[0]
	require.NoError(t, c.Finalize(ctx))
	s := streams.Default(devs[0])
	buf, err := alloc.Malloc[int8](ctx, s, 4)
	require.NoError(t, err)
	assert.ErrorIs(t, AllReduce(ctx, s, c, buf, buf, Sum).Wait(ctx), device.ErrClosed)
	require.NoError(t, c.Close(ctx))
}

// usable checks that dev still runs work: a user's mistake leaves it usable.
func usable(t *testing.T, ctx context.Context, dev *device.Device) {
	t.Helper()
	s := streams.Default(dev)
	b, err := alloc.Malloc[uint32](ctx, s, 4)
	require.NoError(t, err)
	require.NoError(t, b.CopyIn(ctx, []uint32{1, 2, 3, 4}))
	out := make([]uint32, 4)
	require.NoError(t, b.CopyOut(ctx, out))
	assert.Equal(t, []uint32{1, 2, 3, 4}, out)
	require.NoError(t, b.Close(ctx))
	require.NoError(t, dev.Err())
}

func closeAll(t *testing.T, comms []*Comm) {
	t.Helper()
	ctx := context.Background()
	var errs []error
	for _, c := range comms {
		errs = append(errs, c.Close(ctx))
	}
	require.NoError(t, errors.Join(errs...))
}
