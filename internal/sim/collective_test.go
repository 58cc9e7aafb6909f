package sim

import (
	"errors"
	"fmt"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
