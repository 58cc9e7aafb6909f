package sim

import (
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// rank is one simulated device's rank of a test communicator.
type rank struct {
	d backend.Device
	s backend.Stream
	c backend.Comm
}

// within runs f and fails the test if it does not return in time: a collective that hangs
// fails the test instead of stalling it.
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatalf("%s did not return", what)
	}
}

// settle polls c's async error until it is no longer ErrCollInProgress and returns it.
func settle(t *testing.T, d backend.Device, c backend.Comm) error {
	t.Helper()
	var err error
	within(t, "CollCommAsyncError", func() {
		for {
			if err = d.CollCommAsyncError(c); !errors.Is(err, backend.ErrCollInProgress) {
				return
			}
			time.Sleep(time.Millisecond)
		}
	})
	return err
}

// failure polls c's async error until c has failed and returns the failure.
func failure(t *testing.T, d backend.Device, c backend.Comm) *backend.CollError {
	t.Helper()
	var ce *backend.CollError
	within(t, "the communicator's failure", func() {
		for !errors.As(d.CollCommAsyncError(c), &ce) {
			time.Sleep(time.Millisecond)
		}
	})
	return ce
}

// join makes n devices of one backend and joins them to one communicator.
func join(t *testing.T, n int, opts ...Option) []*rank {
	t.Helper()
	b := New(append([]Option{WithDevices(n)}, opts...)...)
	ranks := make([]*rank, n)
	var id backend.CommID
	for i := range ranks {
		d, err := b.Open(i)
		require.NoError(t, err)
		ranks[i] = &rank{d: d, s: mkStream(t, d)}
		if i == 0 {
			id, err = d.CollUniqueID()
			require.NoError(t, err)
		}
	}
	for i, r := range ranks {
		c, err := r.d.CollCommInitRank(n, id, i, backend.CommConfig{})
		require.NoError(t, err)
		r.c = c
	}
	for _, r := range ranks {
		require.NoError(t, settle(t, r.d, r.c))
	}
	t.Cleanup(func() {
		for _, r := range ranks {
			_ = r.d.CollCommAbort(r.c)
		}
	})
	return ranks
}

func put[T any](t *testing.T, r *rank, v []T) backend.DevicePtr {
	t.Helper()
	n := uint64(len(v)) * uint64(unsafe.Sizeof(v[0]))
	p := malloc(t, r.d, n)
	require.NoError(t, r.d.CopyHtoD(p, unsafe.Pointer(&v[0]), n, r.s))
	return p
}

func zeros[T any](t *testing.T, r *rank, n int) backend.DevicePtr {
	t.Helper()
	return put(t, r, make([]T, n))
}

func get[T any](t *testing.T, r *rank, p backend.DevicePtr, n int) []T {
	t.Helper()
	v := make([]T, n)
	within(t, "copy back", func() {
		require.NoError(t, r.d.CopyDtoH(unsafe.Pointer(&v[0]), p, uint64(n)*uint64(unsafe.Sizeof(v[0])), r.s))
	})
	return v
}

func launchAll(t *testing.T, ranks []*rank, ops func(i int) []backend.CollOp) {
	t.Helper()
	for i, r := range ranks {
		require.NoError(t, r.d.CollLaunch(r.c, r.s, ops(i)), "rank %d", i)
	}
}

func syncAll(t *testing.T, ranks []*rank) {
	t.Helper()
	for i, r := range ranks {
		within(t, fmt.Sprintf("rank %d's stream", i), func() { require.NoError(t, r.d.StreamSynchronize(r.s)) })
	}
}

type number interface {
	~int8 | ~uint8 | ~int32 | ~uint32 | ~int64 | ~uint64 | ~float32 | ~float64
}

// cpuReduce is the reference: element i of every rank's input combined in rank order, with
// NCCL's average (integers: sum then truncating division; floats: each input times 1/n).
func cpuReduce[T number](in [][]T, op backend.CollRedOp, float bool) []T {
	n := len(in)
	out := make([]T, len(in[0]))
	for i := range out {
		var acc T
		for r := range n {
			x := in[r][i]
			if op == backend.CollAvg && float {
				x *= T(1) / T(n)
			}
			switch {
			case r == 0:
				acc = x
			case op == backend.CollProd:
				acc *= x
			case op == backend.CollMax:
				if x > acc {
					acc = x
				}
			case op == backend.CollMin:
				if x < acc {
					acc = x
				}
			default:
				acc += x
			}
		}
		if op == backend.CollAvg && !float {
			acc /= T(n)
		}
		out[i] = acc
	}
	return out
}

// allReduceCase all-reduces inputs made by gen on every rank with every reduction and checks
// each rank's result against cpuReduce.
func allReduceCase[T number](t *testing.T, ranks []*rank, dt backend.CollDataType, float bool, gen func(r, i int) T) {
	const n = 37
	in := make([][]T, len(ranks))
	for r := range ranks {
		in[r] = make([]T, n)
		for i := range in[r] {
			in[r][i] = gen(r, i)
		}
	}
	for _, op := range []backend.CollRedOp{backend.CollSum, backend.CollProd, backend.CollMax, backend.CollMin, backend.CollAvg} {
		want := cpuReduce(in, op, float)
		send := make([]backend.DevicePtr, len(ranks))
		recv := make([]backend.DevicePtr, len(ranks))
		for r, rk := range ranks {
			send[r], recv[r] = put(t, rk, in[r]), zeros[T](t, rk, n)
		}
		launchAll(t, ranks, func(r int) []backend.CollOp {
			return []backend.CollOp{{Kind: backend.CollAllReduce, Send: send[r], Recv: recv[r], Count: n, Type: dt, Op: op}}
		})
		for r, rk := range ranks {
			assert.Equal(t, want, get[T](t, rk, recv[r], n), "type %d op %d rank %d", dt, op, r)
		}
	}
}

func TestCollAllReduceEveryTypeAndOp(t *testing.T) {
	ranks := join(t, 3)
	// Negative, positive and wrapping values; avg of ints truncates toward zero.
	allReduceCase(t, ranks, backend.CollInt8, false, func(r, i int) int8 { return int8(i*7 - 100 + r*31) })
	allReduceCase(t, ranks, backend.CollUint8, false, func(r, i int) uint8 { return uint8(i*13 + r*97) })
	allReduceCase(t, ranks, backend.CollInt32, false, func(r, i int) int32 { return int32(i*1_000_003 - 7 - r*50_000_000) })
	allReduceCase(t, ranks, backend.CollUint32, false, func(r, i int) uint32 { return uint32(i)*4_000_000_007 + uint32(r) })
	allReduceCase(t, ranks, backend.CollInt64, false, func(r, i int) int64 { return int64(i)*-3_000_000_000_000 + int64(r) })
	allReduceCase(t, ranks, backend.CollUint64, false, func(r, i int) uint64 { return uint64(i)<<40 + uint64(r)*3 })
	allReduceCase(t, ranks, backend.CollFloat32, true, func(r, i int) float32 { return float32(i-18) + float32(r)*0.25 })
	allReduceCase(t, ranks, backend.CollFloat64, true, func(r, i int) float64 { return float64(i-18)*1.5 + float64(r) })
}

func TestCollAllReduceNarrowFloats(t *testing.T) {
	ranks := join(t, 2)
	type tc struct {
		dt          backend.CollDataType
		enc         func(float32) uint16
		a, b        float32
		sum, avg, p float32
	}
	for _, c := range []tc{
		{backend.CollFloat16, floatToHalf, 1.5, -2.25, -0.75, -0.375, -3.375},
		{backend.CollBfloat16, floatToBF16, 3, 5, 8, 4, 15},
		{backend.CollFloat8E4M3, floatToE4M3, 2, 6, 8, 4, 12},
		{backend.CollFloat8E5M2, floatToE5M2, 0.5, 3, 3.5, 1.75, 1.5},
	} {
		for _, op := range []struct {
			op   backend.CollRedOp
			want float32
		}{{backend.CollSum, c.sum}, {backend.CollAvg, c.avg}, {backend.CollProd, c.p}, {backend.CollMax, max(c.a, c.b)}, {backend.CollMin, min(c.a, c.b)}} {
			size := collElemSize(c.dt)
			raw := func(v float32) []byte {
				h := c.enc(v)
				return []byte{byte(h), byte(h >> 8)}[:size]
			}
			in := [][]byte{raw(c.a), raw(c.b)}
			var send, recv [2]backend.DevicePtr
			for r, rk := range ranks {
				send[r], recv[r] = put(t, rk, in[r]), zeros[byte](t, rk, int(size))
			}
			launchAll(t, ranks, func(r int) []backend.CollOp {
				return []backend.CollOp{{Kind: backend.CollAllReduce, Send: send[r], Recv: recv[r], Count: 1, Type: c.dt, Op: op.op}}
			})
			for r, rk := range ranks {
				assert.Equal(t, raw(op.want), get[byte](t, rk, recv[r], int(size)), "type %d op %d rank %d", c.dt, op.op, r)
			}
		}
	}
}

func TestCollBroadcastReduceGatherScatter(t *testing.T) {
	ranks := join(t, 4)
	const n = 5
	in := make([][]int32, 4)
	for r := range in {
		in[r] = make([]int32, 4*n)
		for i := range in[r] {
			in[r][i] = int32(100*r + i)
		}
	}
	send := make([]backend.DevicePtr, 4)
	bcast, red, gather, scatter := make([]backend.DevicePtr, 4), make([]backend.DevicePtr, 4), make([]backend.DevicePtr, 4), make([]backend.DevicePtr, 4)
	for r, rk := range ranks {
		send[r] = put(t, rk, in[r])
		bcast[r], red[r], gather[r], scatter[r] = zeros[int32](t, rk, n), zeros[int32](t, rk, n), zeros[int32](t, rk, 4*n), zeros[int32](t, rk, n)
	}
	// One launch each, in the same order on every rank; the broadcast's root is 2, the
	// reduce's 1, and rank 3 broadcasts in place into its own send buffer's copy.
	launchAll(t, ranks, func(r int) []backend.CollOp {
		return []backend.CollOp{{Kind: backend.CollBroadcast, Send: send[r], Recv: bcast[r], Count: n, Type: backend.CollInt32, Peer: 2}}
	})
	launchAll(t, ranks, func(r int) []backend.CollOp {
		return []backend.CollOp{{Kind: backend.CollReduce, Send: send[r], Recv: red[r], Count: n, Type: backend.CollInt32, Op: backend.CollMax, Peer: 1}}
	})
	launchAll(t, ranks, func(r int) []backend.CollOp {
		return []backend.CollOp{{Kind: backend.CollAllGather, Send: send[r], Recv: gather[r], Count: n, Type: backend.CollInt32}}
	})
	launchAll(t, ranks, func(r int) []backend.CollOp {
		return []backend.CollOp{{Kind: backend.CollReduceScatter, Send: send[r], Recv: scatter[r], Count: n, Type: backend.CollInt32, Op: backend.CollSum}}
	})
	wantGather := []int32{}
	for r := range 4 {
		wantGather = append(wantGather, in[r][:n]...)
	}
	sum := cpuReduce(in, backend.CollSum, false)
	for r, rk := range ranks {
		assert.Equal(t, in[2][:n], get[int32](t, rk, bcast[r], n), "broadcast, rank %d", r)
		if r == 1 {
			assert.Equal(t, in[3][:n], get[int32](t, rk, red[r], n), "reduce max at the root")
		} else {
			assert.Equal(t, make([]int32, n), get[int32](t, rk, red[r], n), "reduce writes only the root's buffer, rank %d", r)
		}
		assert.Equal(t, wantGather, get[int32](t, rk, gather[r], 4*n), "all-gather, rank %d", r)
		assert.Equal(t, sum[r*n:(r+1)*n], get[int32](t, rk, scatter[r], n), "reduce-scatter, rank %d", r)
	}
}

func TestCollInPlaceAllReduce(t *testing.T) {
	ranks := join(t, 2)
	buf := []backend.DevicePtr{put(t, ranks[0], []float32{1, 2}), put(t, ranks[1], []float32{10, 20})}
	launchAll(t, ranks, func(r int) []backend.CollOp {
		return []backend.CollOp{{Kind: backend.CollAllReduce, Send: buf[r], Recv: buf[r], Count: 2, Type: backend.CollFloat32}}
	})
	for r, rk := range ranks {
		assert.Equal(t, []float32{11, 22}, get[float32](t, rk, buf[r], 2))
	}
}

// TestCollGroupedAllToAll sends a chunk from every rank to every rank, itself included, all
// in one grouped launch per rank, twice: the second round checks that transfers between a
// pair match in order.
func TestCollGroupedAllToAll(t *testing.T) {
	const n, chunk = 4, 3
	ranks := join(t, n)
	for round := range 2 {
		send, recv := make([]backend.DevicePtr, n), make([]backend.DevicePtr, n)
		for r, rk := range ranks {
			v := make([]int64, n*chunk)
			for i := range v {
				v[i] = int64(1000*round + 100*r + i) // chunk i/chunk goes to rank i/chunk
			}
			send[r], recv[r] = put(t, rk, v), zeros[int64](t, rk, n*chunk)
		}
		launchAll(t, ranks, func(r int) []backend.CollOp {
			var ops []backend.CollOp
			for p := range n { // receives first: a group's order must not matter
				ops = append(ops, backend.CollOp{Kind: backend.CollRecv, Recv: recv[r] + backend.DevicePtr(8*chunk*p), Count: chunk, Type: backend.CollInt64, Peer: int32(p)})
			}
			for p := range n {
				ops = append(ops, backend.CollOp{Kind: backend.CollSend, Send: send[r] + backend.DevicePtr(8*chunk*p), Count: chunk, Type: backend.CollInt64, Peer: int32(p)})
			}
			return ops
		})
		for r, rk := range ranks {
			want := make([]int64, 0, n*chunk)
			for p := range n {
				for i := range chunk {
					want = append(want, int64(1000*round+100*p+chunk*r+i))
				}
			}
			assert.Equal(t, want, get[int64](t, rk, recv[r], n*chunk), "round %d rank %d", round, r)
		}
	}
}

func TestCollSplit(t *testing.T) {
	ranks := join(t, 4)
	// Even ranks form one comm, odd ranks another, each ordered by descending old rank; rank 3
	// takes no part.
	sub := make([]backend.Comm, 4)
	for r, rk := range ranks {
		color := r % 2
		if r == 3 {
			color = backend.SplitNoColor
		}
		c, err := rk.d.CollCommSplit(rk.c, color, -r, backend.CommConfig{})
		require.NoError(t, err)
		sub[r] = c
	}
	assert.Zero(t, sub[3], "SplitNoColor gets no communicator")
	for r := range 3 {
		require.NoError(t, settle(t, ranks[r].d, sub[r]))
	}
	for r, want := range map[int][3]int{0: {2, 1, 0}, 2: {2, 0, 2}, 1: {1, 0, 1}} {
		count, rank, dev, err := ranks[r].d.CollCommInfo(sub[r])
		require.NoError(t, err)
		assert.Equal(t, want, [3]int{count, rank, dev}, "old rank %d", r)
	}
	bufs := make([]backend.DevicePtr, 3)
	for r := range 3 {
		bufs[r] = put(t, ranks[r], []int32{int32(r + 1)})
	}
	for _, r := range []int{0, 2} {
		rk := ranks[r]
		require.NoError(t, rk.d.CollLaunch(sub[r], rk.s, []backend.CollOp{{Kind: backend.CollAllReduce, Send: bufs[r], Recv: bufs[r], Count: 1, Type: backend.CollInt32}}))
	}
	assert.Equal(t, []int32{4}, get[int32](t, ranks[0], bufs[0], 1))
	assert.Equal(t, []int32{4}, get[int32](t, ranks[2], bufs[2], 1))
	// The one-rank comm reduces alone; the parent still works beside the children.
	require.NoError(t, ranks[1].d.CollLaunch(sub[1], ranks[1].s, []backend.CollOp{{Kind: backend.CollAllReduce, Send: bufs[1], Recv: bufs[1], Count: 1, Type: backend.CollInt32}}))
	assert.Equal(t, []int32{2}, get[int32](t, ranks[1], bufs[1], 1))
	for r := range 3 {
		require.NoError(t, ranks[r].d.CollCommDestroy(sub[r]))
	}
}

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

func TestNarrowFloatConversions(t *testing.T) {
	for h := range uint32(1 << 16) {
		f := halfToFloat(uint16(h))
		if f != f {
			continue
		}
		require.Equal(t, uint16(h), floatToHalf(f), "half %#04x", h)
		require.Equal(t, uint16(h), floatToBF16(bf16ToFloat(uint16(h))), "bf16 %#04x", h)
	}
	for h := range uint16(256) {
		if f := e4m3ToFloat(h); f == f {
			require.Equal(t, h, floatToE4M3(f), "e4m3 %#02x", h)
		}
		if f := e5m2ToFloat(h); f == f && !math.IsInf(float64(f), 0) {
			require.Equal(t, h, floatToE5M2(f), "e5m2 %#02x", h)
		}
	}
	assert.Equal(t, float32(448), e4m3ToFloat(floatToE4M3(1000)), "E4M3 saturates")
	assert.Equal(t, float32(57344), e5m2ToFloat(floatToE5M2(1e6)), "E5M2 saturates")
	assert.Equal(t, uint16(0x3c00), floatToHalf(1+1.0/4096), "ties to even")
	assert.Equal(t, uint16(0x7c00), floatToHalf(70000), "half overflows to infinity")
	assert.Equal(t, uint16(0x0001), floatToHalf(float32(math.Ldexp(1, -24))), "smallest subnormal")
}

// TestCollRanksOnTheirOwnGoroutines drives each rank from its own goroutine, as each device's
// actor would, each on a backend of its own (as ranks in different processes are): many
// all-reduces and a ring of sends and receives, launched without waiting, then checked.
func TestCollRanksOnTheirOwnGoroutines(t *testing.T) {
	const n, rounds = 4, 40
	ranks := make([]*rank, n)
	for i := range ranks {
		d, err := New(WithDevices(1)).Open(0)
		require.NoError(t, err)
		ranks[i] = &rank{d: d, s: mkStream(t, d)}
	}
	id, err := ranks[0].d.CollUniqueID()
	require.NoError(t, err)
	for i, r := range ranks {
		r.c, err = r.d.CollCommInitRank(n, id, i, backend.CommConfig{})
		require.NoError(t, err)
	}
	t.Cleanup(func() {
		for _, r := range ranks {
			_ = r.d.CollCommAbort(r.c)
		}
	})
	// Memory is set up here: the goroutines make only the calls a rank's actor would.
	ins, sums, rings := make([]backend.DevicePtr, n), make([]backend.DevicePtr, n), make([]backend.DevicePtr, n)
	for i, r := range ranks {
		ins[i], sums[i], rings[i] = put(t, r, []int64{int64(i + 1)}), zeros[int64](t, r, rounds), zeros[int64](t, r, rounds)
	}
	errs := make(chan error, n)
	for i, r := range ranks {
		go func() {
			errs <- func() error {
				for errors.Is(r.d.CollCommAsyncError(r.c), backend.ErrCollInProgress) {
					time.Sleep(time.Millisecond)
				}
				for k := range rounds {
					at := backend.DevicePtr(8 * k)
					if err := r.d.CollLaunch(r.c, r.s, []backend.CollOp{{Kind: backend.CollAllReduce, Send: ins[i], Recv: sums[i] + at, Count: 1, Type: backend.CollInt64}}); err != nil {
						return err
					}
					if err := r.d.CollLaunch(r.c, r.s, []backend.CollOp{
						{Kind: backend.CollSend, Send: ins[i], Count: 1, Type: backend.CollInt64, Peer: int32((i + 1) % n)},
						{Kind: backend.CollRecv, Recv: rings[i] + at, Count: 1, Type: backend.CollInt64, Peer: int32((i + n - 1) % n)},
					}); err != nil {
						return err
					}
				}
				if err := r.d.StreamSynchronize(r.s); err != nil {
					return err
				}
				return r.d.CollCommAsyncError(r.c)
			}()
		}()
	}
	for range n {
		select {
		case err := <-errs:
			require.NoError(t, err)
		case <-time.After(30 * time.Second):
			t.Fatal("ranks did not finish")
		}
	}
	for i, r := range ranks {
		sum, ring := get[int64](t, r, sums[i], rounds), get[int64](t, r, rings[i], rounds)
		for k := range rounds {
			assert.Equal(t, int64(n*(n+1)/2), sum[k], "rank %d round %d", i, k)
			assert.Equal(t, int64((i+n-1)%n+1), ring[k], "rank %d round %d", i, k)
		}
	}
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
	launchAll(t, ranks, func(r int) []backend.CollOp {
		return []backend.CollOp{{Kind: backend.CollAllReduce, Send: bufs[r], Recv: bufs[r], Count: 1, Type: backend.CollInt32}}
	})
	assert.Equal(t, backend.CollUnhandledCudaError, failure(t, d0, ranks[0].c).Code)
	within(t, "the healthy rank's stream", func() { _ = d1.StreamSynchronize(ranks[1].s) })
	assert.Equal(t, backend.CollRemoteError, failure(t, d1, ranks[1].c).Code)
	assert.Equal(t, []int32{2}, get[int32](t, ranks[1], bufs[1], 1), "the healthy rank's buffer is untouched")
}

func TestCollMaxMinDropNaN(t *testing.T) {
	nan := float32(math.NaN())
	parts := [][]byte{elemBytes([]float32{nan, 1, nan}), elemBytes([]float32{2, nan, nan})}
	assert.Equal(t, []float32{2, 1}, elems[float32](reduceParts(backend.CollFloat32, backend.CollMax, parts))[:2])
	assert.Equal(t, []float32{2, 1}, elems[float32](reduceParts(backend.CollFloat32, backend.CollMin, parts))[:2])
	assert.True(t, math.IsNaN(float64(elems[float32](reduceParts(backend.CollFloat32, backend.CollMax, parts))[2])), "NaN only where every input is")
	half := func(v float32) []byte { h := floatToHalf(v); return []byte{byte(h), byte(h >> 8)} }
	got := reduceParts(backend.CollFloat16, backend.CollMax, [][]byte{half(nan), half(3)})
	assert.Equal(t, half(3), got)
}
