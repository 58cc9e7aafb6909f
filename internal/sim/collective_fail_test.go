package sim

import (
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// Collectives that fail: aborts, missing and dropped peers, faults, bad input, strangers.

// TestCollAbortFailsPeers has a rank abort while the others wait for it in an all-reduce:
// their streams finish, their comms report a remote error, and their devices stay usable.
func TestCollAbortFailsPeers(t *testing.T) {
	ranks := join(t, 3)
	bufs := make([]backend.DevicePtr, 3)
	for r, rk := range ranks {
		bufs[r] = put(t, rk, []uint32{7})
	}
	for r := range 2 {
		rk := ranks[r]
		require.NoError(t, rk.d.CollLaunch(rk.c, rk.s, []backend.CollOp{{Kind: backend.CollAllReduce, Send: bufs[r], Recv: bufs[r], Count: 1, Type: backend.CollUint32}}))
	}
	require.NoError(t, ranks[0].d.CollCommAsyncError(ranks[0].c), "the all-reduce waits on its stream; the comm has not failed")
	require.NoError(t, ranks[2].d.CollCommAbort(ranks[2].c))
	syncAll(t, ranks[:2])
	for r := range 2 {
		rk := ranks[r]
		err := settle(t, rk.d, rk.c)
		var ce *backend.CollError
		require.ErrorAs(t, err, &ce, "rank %d", r)
		assert.Equal(t, backend.CollRemoteError, ce.Code)
		assert.Contains(t, ce.Detail, "rank 2")
		assert.Equal(t, []uint32{7}, get[uint32](t, rk, bufs[r], 1), "a failed all-reduce writes nothing")
		// The failed comm refuses more work; the device does not.
		err = rk.d.CollLaunch(rk.c, rk.s, []backend.CollOp{{Kind: backend.CollAllReduce, Send: bufs[r], Recv: bufs[r], Count: 1, Type: backend.CollUint32}})
		require.ErrorAs(t, err, &ce)
		assert.Equal(t, backend.CollRemoteError, ce.Code)
		require.NoError(t, rk.d.Memset(bufs[r], 1, 4, rk.s))
		assert.Equal(t, []uint32{0x01010101}, get[uint32](t, rk, bufs[r], 1))
		require.NoError(t, rk.d.CollCommAbort(rk.c))
	}
	_, _, _, err := ranks[2].d.CollCommInfo(ranks[2].c)
	require.Error(t, err, "an aborted comm is gone")
}

// TestCollAbortUnblocksOwnStream aborts a rank whose all-reduce waits for a peer that never
// launched it: the rank's own stream goes on.
func TestCollAbortUnblocksOwnStream(t *testing.T) {
	ranks := join(t, 2)
	buf := put(t, ranks[0], []int32{3})
	r0 := ranks[0]
	require.NoError(t, r0.d.CollLaunch(r0.c, r0.s, []backend.CollOp{{Kind: backend.CollAllReduce, Send: buf, Recv: buf, Count: 1, Type: backend.CollInt32}}))
	require.ErrorIs(t, r0.d.StreamQuery(r0.s), cudaerr.NotReady, "the all-reduce waits for rank 1")
	require.NoError(t, r0.d.CollCommAbort(r0.c))
	syncAll(t, ranks[:1])
	assert.Equal(t, []int32{3}, get[int32](t, r0, buf, 1))
	assert.Equal(t, backend.CollRemoteError, failure(t, ranks[1].d, ranks[1].c).Code, "the peer learns of the abort")
}

// TestCollMissingPeerNeverJoins: a comm whose last rank never comes stays in progress, and
// abort is the way out.
func TestCollMissingPeerNeverJoins(t *testing.T) {
	b := New(WithDevices(1))
	d, err := b.Open(0)
	require.NoError(t, err)
	id, err := d.CollUniqueID()
	require.NoError(t, err)
	c, err := d.CollCommInitRank(2, id, 0, backend.CommConfig{})
	require.NoError(t, err)
	time.Sleep(20 * time.Millisecond)
	require.ErrorIs(t, d.CollCommAsyncError(c), backend.ErrCollInProgress)
	s := mkStream(t, d)
	p := malloc(t, d, 4)
	var ce *backend.CollError
	require.ErrorAs(t, d.CollLaunch(c, s, []backend.CollOp{{Kind: backend.CollAllReduce, Send: p, Recv: p, Count: 1, Type: backend.CollInt32}}), &ce)
	assert.Equal(t, backend.CollInvalidArgument, ce.Code, "a comm still joining is not usable")
	_, _, _, err = d.CollCommInfo(c)
	require.ErrorAs(t, err, &ce)
	require.NoError(t, d.CollCommAbort(c))
	require.ErrorAs(t, d.CollCommAsyncError(c), &ce)
	assert.Equal(t, backend.CollInvalidArgument, ce.Code, "the aborted comm is unknown")
}

func TestCollMismatchedCollectivesFail(t *testing.T) {
	ranks := join(t, 2)
	bufs := []backend.DevicePtr{put(t, ranks[0], []int32{1, 2}), put(t, ranks[1], []int32{1, 2})}
	launchAll(t, ranks, func(r int) []backend.CollOp {
		return []backend.CollOp{{Kind: backend.CollAllReduce, Send: bufs[r], Recv: bufs[r], Count: uint64(1 + r), Type: backend.CollInt32}}
	})
	syncAll(t, ranks)
	for _, rk := range ranks {
		var ce *backend.CollError
		require.ErrorAs(t, settle(t, rk.d, rk.c), &ce)
		assert.Equal(t, backend.CollInvalidUsage, ce.Code)
		assert.Contains(t, ce.Detail, "count 2")
	}
}

func TestCollBadInput(t *testing.T) {
	ranks := join(t, 2)
	r0, r1 := ranks[0], ranks[1]
	good := malloc(t, r0.d, 64)
	other := malloc(t, r1.d, 64)
	code := func(err error) int32 {
		t.Helper()
		var ce *backend.CollError
		require.ErrorAs(t, err, &ce)
		return ce.Code
	}
	id, err := r0.d.CollUniqueID()
	require.NoError(t, err)
	_, err = r0.d.CollCommInitRank(0, id, 0, backend.CommConfig{})
	assert.Equal(t, backend.CollInvalidArgument, code(err), "nranks 0")
	_, err = r0.d.CollCommInitRank(2, id, 2, backend.CommConfig{})
	assert.Equal(t, backend.CollInvalidArgument, code(err), "rank out of range")
	_, err = r0.d.CollCommInitRank(2, backend.CommID{1, 2, 3}, 0, backend.CommConfig{})
	assert.Equal(t, backend.CollInvalidArgument, code(err), "garbage id")
	_, err = r0.d.CollCommInitRank(2, id, 0, backend.CommConfig{MinCTAs: 8, MaxCTAs: 4})
	assert.Equal(t, backend.CollInvalidArgument, code(err), "minCTAs above maxCTAs")
	assert.Equal(t, backend.CollInvalidArgument, code(r0.d.CollCommAsyncError(0xbad)), "unknown comm")
	assert.Equal(t, backend.CollInvalidArgument, code(r0.d.CollCommAsyncError(r1.c)), "another device's comm")
	_, err = r0.d.CollCommSplit(r0.c, -5, 0, backend.CommConfig{})
	assert.Equal(t, backend.CollInvalidArgument, code(err), "negative color")

	ar := func(mut func(*backend.CollOp)) backend.CollOp {
		op := backend.CollOp{Kind: backend.CollAllReduce, Send: good, Recv: good, Count: 16, Type: backend.CollInt32}
		mut(&op)
		return op
	}
	for name, op := range map[string]backend.CollOp{
		"pointer past the allocation": ar(func(o *backend.CollOp) { o.Count = 17 }),
		"another device's pointer":    ar(func(o *backend.CollOp) { o.Recv = other }),
		"null pointer":                ar(func(o *backend.CollOp) { o.Send = 0 }),
		"count overflow":              ar(func(o *backend.CollOp) { o.Count = 1 << 62 }),
		"unknown type":                ar(func(o *backend.CollOp) { o.Type = 12 }),
		"unknown op":                  ar(func(o *backend.CollOp) { o.Op = 5 }),
		"unknown kind":                ar(func(o *backend.CollOp) { o.Kind = 99 }),
		"root out of range":           ar(func(o *backend.CollOp) { o.Kind, o.Peer = backend.CollBroadcast, 2 }),
		"peer out of range":           ar(func(o *backend.CollOp) { o.Kind, o.Peer = backend.CollSend, -1 }),
		"gather receive too small":    ar(func(o *backend.CollOp) { o.Kind = backend.CollAllGather; o.Count = 9 }),
	} {
		err := r0.d.CollLaunch(r0.c, r0.s, []backend.CollOp{op})
		assert.Equal(t, backend.CollInvalidArgument, code(err), name)
	}
	err = r0.d.CollLaunch(r0.c, r1.s, []backend.CollOp{ar(func(*backend.CollOp) {})})
	assert.Equal(t, backend.CollInvalidArgument, code(err), "another device's stream")
	err = r0.d.CollLaunch(r0.c, 0xdead, []backend.CollOp{ar(func(*backend.CollOp) {})})
	assert.Equal(t, backend.CollInvalidArgument, code(err), "no such stream")
	require.NoError(t, r0.d.PeekLastError(), "NCCL's refusals leave CUDA's last error alone")

	// None of that moved the ranks out of step: a real all-reduce still matches.
	bufs := []backend.DevicePtr{put(t, r0, []int32{5}), put(t, r1, []int32{6})}
	launchAll(t, ranks, func(r int) []backend.CollOp {
		return []backend.CollOp{{Kind: backend.CollAllReduce, Send: bufs[r], Recv: bufs[r], Count: 1, Type: backend.CollInt32}}
	})
	assert.Equal(t, []int32{11}, get[int32](t, r0, bufs[0], 1))
	assert.Equal(t, []int32{11}, get[int32](t, r1, bufs[1], 1))
	require.NoError(t, r0.d.CollCommAsyncError(r0.c))
}

// TestCollFinalizeAndDestroy: destroy refuses while a launch is outstanding; finalize reports
// progress until it is done; then destroy leaves cleanly, and the peer does not fail.
func TestCollFinalizeAndDestroy(t *testing.T) {
	ranks := join(t, 2)
	r0, r1 := ranks[0], ranks[1]
	bufs := []backend.DevicePtr{put(t, r0, []int32{1}), put(t, r1, []int32{2})}
	op := func(r int) []backend.CollOp {
		return []backend.CollOp{{Kind: backend.CollAllReduce, Send: bufs[r], Recv: bufs[r], Count: 1, Type: backend.CollInt32}}
	}
	require.NoError(t, r0.d.CollLaunch(r0.c, r0.s, op(0)))
	var ce *backend.CollError
	require.ErrorAs(t, r0.d.CollCommDestroy(r0.c), &ce)
	assert.Equal(t, backend.CollInvalidUsage, ce.Code)
	require.NoError(t, r0.d.CollCommFinalize(r0.c))
	require.ErrorIs(t, r0.d.CollCommAsyncError(r0.c), backend.ErrCollInProgress, "rank 1 has not joined the all-reduce")
	require.ErrorAs(t, r0.d.CollLaunch(r0.c, r0.s, op(0)), &ce)
	assert.Equal(t, backend.CollInvalidUsage, ce.Code, "a finalized comm takes no launch")
	require.NoError(t, r1.d.CollLaunch(r1.c, r1.s, op(1)))
	require.NoError(t, settle(t, r0.d, r0.c))
	require.NoError(t, r0.d.CollCommDestroy(r0.c))
	assert.Equal(t, []int32{3}, get[int32](t, r1, bufs[1], 1))
	require.NoError(t, r1.d.CollCommFinalize(r1.c))
	require.NoError(t, settle(t, r1.d, r1.c), "a clean leave does not fail the peer")
	require.NoError(t, r1.d.CollCommDestroy(r1.c))
}

// TestCollRootClosesWhenIdle: the process's root goes once its last communicator does.
func TestCollRootClosesWhenIdle(t *testing.T) {
	// Earlier tests' ids may keep the current root open: start this test on a root of its own.
	theRoot.mu.Lock()
	theRoot.r = nil
	theRoot.mu.Unlock()
	ranks := join(t, 2)
	theRoot.mu.Lock()
	r := theRoot.r
	theRoot.mu.Unlock()
	require.NotNil(t, r)
	for _, rk := range ranks {
		require.NoError(t, rk.d.CollCommDestroy(rk.c))
	}
	within(t, "root shutdown", func() {
		for {
			r.mu.Lock()
			shut := r.shut
			r.mu.Unlock()
			if shut {
				return
			}
			time.Sleep(time.Millisecond)
		}
	})
}

func TestCollFaultedDeviceFailsTheComm(t *testing.T) {
	ranks := join(t, 2, WithConfinedFaults()) // the peer's device stays healthy
	r0 := ranks[0]
	buf := put(t, r0, []int32{1})
	require.NoError(t, r0.d.CollLaunch(r0.c, r0.s, []backend.CollOp{{Kind: backend.CollAllReduce, Send: buf, Recv: buf, Count: 1, Type: backend.CollInt32}}))
	r0.d.(*device).setFault(cudaerr.IllegalAddress, "test fault")
	var ce *backend.CollError
	require.ErrorAs(t, settle(t, r0.d, r0.c), &ce)
	assert.Equal(t, backend.CollUnhandledCudaError, ce.Code)
	assert.Equal(t, backend.CollRemoteError, failure(t, ranks[1].d, ranks[1].c).Code, "the peer fails with it")
	_, err := r0.d.CollUniqueID()
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, backend.CollUnhandledCudaError, ce.Code)
}

// TestCollRootRefusesInconsistentJoins: ranks that disagree on the size, or a rank that joins
// twice, fail the joining rank rather than leave the communicator waiting forever.
func TestCollRootRefusesInconsistentJoins(t *testing.T) {
	b := New(WithDevices(3))
	devs := make([]backend.Device, 3)
	for i := range devs {
		var err error
		devs[i], err = b.Open(i)
		require.NoError(t, err)
	}
	id, err := devs[0].CollUniqueID()
	require.NoError(t, err)
	c0, err := devs[0].CollCommInitRank(2, id, 0, backend.CommConfig{})
	require.NoError(t, err)
	defer devs[0].CollCommAbort(c0)
	require.ErrorIs(t, devs[0].CollCommAsyncError(c0), backend.ErrCollInProgress)
	tok, _, err := decodeID(id)
	require.NoError(t, err)
	// Rank 0 must be heard first for the size to be set: wait until the root has it.
	within(t, "rank 0's hello", func() {
		for {
			theRoot.mu.Lock()
			r := theRoot.r
			theRoot.mu.Unlock()
			r.mu.Lock()
			joined := 0
			if cm := r.comms[tok]; cm != nil {
				joined = cm.joined
			}
			r.mu.Unlock()
			if joined > 0 {
				return
			}
			time.Sleep(time.Millisecond)
		}
	})
	bad, err := devs[1].CollCommInitRank(3, id, 1, backend.CommConfig{})
	require.NoError(t, err, "the size is checked when the rank reaches the root")
	assert.Equal(t, backend.CollInvalidUsage, failure(t, devs[1], bad).Code, "nranks 3 against 2")
	assert.Contains(t, failure(t, devs[1], bad).Detail, "nranks 3")
	twice, err := devs[2].CollCommInitRank(2, id, 0, backend.CommConfig{})
	require.NoError(t, err)
	assert.Equal(t, backend.CollInvalidUsage, failure(t, devs[2], twice).Code, "rank 0 again")
	require.ErrorIs(t, devs[0].CollCommAsyncError(c0), backend.ErrCollInProgress, "the refusals do not disturb the comm")
	c1, err := devs[1].CollCommInitRank(2, id, 1, backend.CommConfig{})
	require.NoError(t, err)
	defer devs[1].CollCommAbort(c1)
	require.NoError(t, settle(t, devs[0], c0))
	require.NoError(t, settle(t, devs[1], c1))
}

// TestCollSendRecvCountMismatch: a receive of another size than its send fails the receiving
// rank's communicator, and the sender's with it, instead of writing past or short.
func TestCollSendRecvCountMismatch(t *testing.T) {
	ranks := join(t, 2)
	src := put(t, ranks[0], []int32{1, 2, 3})
	dst := put(t, ranks[1], []int32{9, 9, 9})
	require.NoError(t, ranks[0].d.CollLaunch(ranks[0].c, ranks[0].s, []backend.CollOp{{Kind: backend.CollSend, Send: src, Count: 2, Type: backend.CollInt32, Peer: 1}}))
	require.NoError(t, ranks[1].d.CollLaunch(ranks[1].c, ranks[1].s, []backend.CollOp{{Kind: backend.CollRecv, Recv: dst, Count: 3, Type: backend.CollInt32, Peer: 0}}))
	syncAll(t, ranks)
	assert.Equal(t, backend.CollInvalidUsage, failure(t, ranks[1].d, ranks[1].c).Code)
	assert.Equal(t, []int32{9, 9, 9}, get[int32](t, ranks[1], dst, 3))
	assert.Equal(t, backend.CollRemoteError, failure(t, ranks[0].d, ranks[0].c).Code)
}

// TestCollRootIgnoresStrangers: a connection that does not open with a hello of a known id
// is dropped, and the communicator forming beside it is not disturbed.
func TestCollRootIgnoresStrangers(t *testing.T) {
	b := New(WithDevices(2))
	d0, err := b.Open(0)
	require.NoError(t, err)
	d1, err := b.Open(1)
	require.NoError(t, err)
	id, err := d0.CollUniqueID()
	require.NoError(t, err)
	_, addr, err := decodeID(id)
	require.NoError(t, err)
	for _, junk := range [][]byte{
		{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, msgHello}, // a frame of 2^63 bytes
		[]byte("GET / HTTP/1.1\r\n\r\n"),
		append([]byte{25, 0, 0, 0, 0, 0, 0, 0, msgHello}, make([]byte, 24)...), // an unknown token
	} {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		_, err = c.Write(junk)
		require.NoError(t, err)
		require.NoError(t, c.SetReadDeadline(time.Now().Add(10*time.Second)))
		_, err = io.ReadAll(c) // the root answers at most a fail message, then closes
		require.NoError(t, err)
		_ = c.Close()
	}
	c0, err := d0.CollCommInitRank(2, id, 0, backend.CommConfig{})
	require.NoError(t, err)
	defer d0.CollCommAbort(c0)
	c1, err := d1.CollCommInitRank(2, id, 1, backend.CommConfig{})
	require.NoError(t, err)
	defer d1.CollCommAbort(c1)
	require.NoError(t, settle(t, d0, c0))
	require.NoError(t, settle(t, d1, c1))
}

// TestCollInjectedFaultDuringACollective: a device that faults as its all-reduce runs (the
// fault plan counts the collective as one operation) fails its rank, and the rank on another
// machine learns of it instead of waiting.
func TestCollInjectedFaultDuringACollective(t *testing.T) {
	d0, err := New(WithDevices(1), WithFaults(0, FaultPlan{StickyAt: 2})).Open(0) // op 1: the upload; op 2: the all-reduce
	require.NoError(t, err)
	d1, err := New(WithDevices(1)).Open(0)
	require.NoError(t, err)
	ranks := []*rank{{d: d0, s: mkStream(t, d0)}, {d: d1, s: mkStream(t, d1)}}
	id, err := d0.CollUniqueID()
	require.NoError(t, err)
	for i, r := range ranks {
		r.c, err = r.d.CollCommInitRank(2, id, i, backend.CommConfig{})
		require.NoError(t, err)
		defer r.d.CollCommAbort(r.c)
	}
	for _, r := range ranks {
		require.NoError(t, settle(t, r.d, r.c))
	}
	bufs := []backend.DevicePtr{put(t, ranks[0], []int32{1}), put(t, ranks[1], []int32{2})}
	// The healthy rank launches first: launched once the fault was in, its launch would be
	// refused at once, which is right too but not what this test is about.
	for _, r := range []int{1, 0} {
		op := backend.CollOp{Kind: backend.CollAllReduce, Send: bufs[r], Recv: bufs[r], Count: 1, Type: backend.CollInt32}
		require.NoError(t, ranks[r].d.CollLaunch(ranks[r].c, ranks[r].s, []backend.CollOp{op}), "rank %d", r)
	}
	assert.Equal(t, backend.CollUnhandledCudaError, failure(t, d0, ranks[0].c).Code)
	within(t, "the healthy rank's stream", func() { _ = d1.StreamSynchronize(ranks[1].s) })
	assert.Equal(t, backend.CollRemoteError, failure(t, d1, ranks[1].c).Code)
	assert.Equal(t, []int32{2}, get[int32](t, ranks[1], bufs[1], 1), "the healthy rank's buffer is untouched")
}
