package collective

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/streams"
)

// Every collective on every device of a machine, one rank each, checked against the CPU: the
// GPU tests run these on every local GPU, the simulator tests on simulated devices.

const gpuElems = 1<<16 + 3 // not a multiple of anything NCCL splits by

// input is rank r's element i: small integers, exact in float32 and for products.
func input[T Elem](r, i int, op Reduction) T {
	switch op {
	case Prod:
		return T(1 + (i+r)%2)
	case Avg:
		return T(0) // filled by the caller as a multiple of the rank count
	}
	return T((i*7 + r*13) % 61)
}

func reduceCPU[T Elem](op Reduction, vals []T) T {
	acc := vals[0]
	for _, v := range vals[1:] {
		switch op {
		case Sum, Avg:
			acc += v
		case Prod:
			acc *= v
		case Max:
			acc = max(acc, v)
		case Min:
			acc = min(acc, v)
		}
	}
	if op == Avg {
		acc /= T(len(vals))
	}
	return acc
}

// commModes are the two kinds of communicator every GPU suite runs with.
var commModes = []struct {
	name string
	opts []Option
}{
	{"blocking", nil},
	{"non-blocking", []Option{WithNonBlocking()}},
}

// modeOpts is the options of the mode named name ("" or "blocking": none).
func modeOpts(name string) []Option {
	for _, m := range commModes {
		if m.name == name {
			return m.opts
		}
	}
	return nil
}

func suiteAllReduce(t *testing.T, ctx context.Context, devs []*device.Device, ss []*streams.Stream, opts ...Option) {
	comms, err := NewLocal(ctx, devs, opts...)
	require.NoError(t, err)
	defer closeComms(t, ctx, comms)
	for _, op := range []Reduction{Sum, Prod, Max, Min, Avg} {
		t.Run("float32/"+op.String(), func(t *testing.T) { checkAllReduce[float32](t, ctx, comms, ss, op) })
		t.Run("int32/"+op.String(), func(t *testing.T) { checkAllReduce[int32](t, ctx, comms, ss, op) })
	}
}

func checkAllReduce[T Elem](t *testing.T, ctx context.Context, comms []*Comm, ss []*streams.Stream, op Reduction) {
	n := len(comms)
	in := make([][]T, n)
	for r := range n {
		in[r] = make([]T, gpuElems)
		for i := range in[r] {
			in[r][i] = input[T](r, i, op)
			if op == Avg {
				in[r][i] = T(n * ((i + r) % 17))
			}
		}
	}
	send := make([]*alloc.Buffer[T], n)
	recv := make([]*alloc.Buffer[T], n)
	fs := make([]*streams.Future, n)
	for r, c := range comms {
		send[r] = upload(t, ctx, ss[r], in[r])
		recv[r] = zeros[T](t, ctx, ss[r], gpuElems)
		fs[r] = AllReduce(ctx, ss[r], c, send[r], recv[r], op)
	}
	waitAll(t, ctx, fs...)
	want := make([]T, gpuElems)
	col := make([]T, n)
	for i := range want {
		for r := range n {
			col[r] = in[r][i]
		}
		want[i] = reduceCPU(op, col)
	}
	for r := range n {
		got := download(t, ctx, recv[r])
		if op != Avg {
			require.Equal(t, want, got, "rank %d", r)
			continue
		}
		// NCCL averages floats by scaling each rank's element by 1/n before summing: exact
		// for two ranks, within rounding for others.
		for i := range want {
			require.InDelta(t, float64(want[i]), float64(got[i]), 1e-3, "rank %d element %d", r, i)
		}
	}
}

func suiteBroadcastReduceGatherScatter(t *testing.T, ctx context.Context, devs []*device.Device, ss []*streams.Stream, opts ...Option) {
	comms, err := NewLocal(ctx, devs, opts...)
	require.NoError(t, err)
	defer closeComms(t, ctx, comms)
	n := len(comms)
	in := make([][]float32, n)
	send := make([]*alloc.Buffer[float32], n)
	for r := range n {
		in[r] = make([]float32, gpuElems)
		for i := range in[r] {
			in[r][i] = input[float32](r, i, Sum)
		}
		send[r] = upload(t, ctx, ss[r], in[r])
	}

	t.Run("broadcast", func(t *testing.T) {
		root := n - 1
		recv := make([]*alloc.Buffer[float32], n)
		fs := make([]*streams.Future, n)
		for r, c := range comms {
			recv[r] = zeros[float32](t, ctx, ss[r], gpuElems)
			fs[r] = Broadcast(ctx, ss[r], c, send[r], recv[r], root)
		}
		waitAll(t, ctx, fs...)
		for r := range n {
			require.Equal(t, in[root], download(t, ctx, recv[r]), "rank %d", r)
		}
	})
	t.Run("reduce", func(t *testing.T) {
		recv := make([]*alloc.Buffer[float32], n)
		fs := make([]*streams.Future, n)
		for r, c := range comms {
			recv[r] = zeros[float32](t, ctx, ss[r], gpuElems)
			fs[r] = Reduce(ctx, ss[r], c, send[r], recv[r], Sum, 0)
		}
		waitAll(t, ctx, fs...)
		want := make([]float32, gpuElems)
		for i := range want {
			for r := range n {
				want[i] += in[r][i]
			}
		}
		require.Equal(t, want, download(t, ctx, recv[0]))
		for r := 1; r < n; r++ {
			assert.Equal(t, make([]float32, gpuElems), download(t, ctx, recv[r]), "rank %d's receive buffer is untouched", r)
		}
	})
	t.Run("all-gather", func(t *testing.T) {
		recv := make([]*alloc.Buffer[float32], n)
		fs := make([]*streams.Future, n)
		for r, c := range comms {
			recv[r] = zeros[float32](t, ctx, ss[r], gpuElems*n)
			fs[r] = AllGather(ctx, ss[r], c, send[r], recv[r])
		}
		waitAll(t, ctx, fs...)
		var want []float32
		for r := range n {
			want = append(want, in[r]...)
		}
		for r := range n {
			require.Equal(t, want, download(t, ctx, recv[r]), "rank %d", r)
		}
	})
	t.Run("reduce-scatter", func(t *testing.T) {
		block := gpuElems / n
		recv := make([]*alloc.Buffer[float32], n)
		fs := make([]*streams.Future, n)
		for r, c := range comms {
			recv[r] = zeros[float32](t, ctx, ss[r], block)
			fs[r] = ReduceScatter(ctx, ss[r], c, send[r], recv[r], Sum)
		}
		waitAll(t, ctx, fs...)
		for r := range n {
			want := make([]float32, block)
			for i := range want {
				for q := range n {
					want[i] += in[q][r*block+i]
				}
			}
			require.Equal(t, want, download(t, ctx, recv[r]), "rank %d", r)
		}
	})
}

func suiteSendRecvRingAndAllToAll(t *testing.T, ctx context.Context, devs []*device.Device, ss []*streams.Stream, opts ...Option) {
	comms, err := NewLocal(ctx, devs, opts...)
	require.NoError(t, err)
	defer closeComms(t, ctx, comms)
	n := len(comms)
	payload := func(from, to, i int) int64 { return int64(from*1_000_000 + to*1000 + i%997) }

	t.Run("ring", func(t *testing.T) {
		var g Group
		recv := make([]*alloc.Buffer[int64], n)
		for r, c := range comms {
			next, prev := (r+1)%n, (r-1+n)%n
			out := make([]int64, gpuElems)
			for i := range out {
				out[i] = payload(r, next, i)
			}
			recv[r] = zeros[int64](t, ctx, ss[r], gpuElems)
			g.Add(SendOp(ss[r], c, upload(t, ctx, ss[r], out), next), RecvOp(ss[r], c, recv[r], prev))
		}
		require.NoError(t, g.Run(ctx))
		for r := range n {
			prev := (r - 1 + n) % n
			got := download(t, ctx, recv[r])
			for i := range got {
				require.Equal(t, payload(prev, r, i), got[i], "rank %d element %d", r, i)
			}
		}
	})
	t.Run("all-to-all", func(t *testing.T) {
		const block = 4099
		var g Group
		recv := make([][]*alloc.Buffer[int64], n)
		for r, c := range comms {
			recv[r] = make([]*alloc.Buffer[int64], n)
			for p := range n {
				out := make([]int64, block)
				for i := range out {
					out[i] = payload(r, p, i)
				}
				recv[r][p] = zeros[int64](t, ctx, ss[r], block)
				g.Add(SendOp(ss[r], c, upload(t, ctx, ss[r], out), p), RecvOp(ss[r], c, recv[r][p], p))
			}
		}
		require.NoError(t, g.Run(ctx))
		for r := range n {
			for p := range n {
				got := download(t, ctx, recv[r][p])
				for i := range got {
					require.Equal(t, payload(p, r, i), got[i], "rank %d from %d element %d", r, p, i)
				}
			}
		}
	})
}

func suiteSplitIntoTwo(t *testing.T, ctx context.Context, devs []*device.Device, ss []*streams.Stream, opts ...Option) {
	comms, err := NewLocal(ctx, devs, opts...)
	require.NoError(t, err)
	defer closeComms(t, ctx, comms)
	n := len(comms)
	halves := make([]*Comm, n)
	errs := make(chan error, n)
	for r, c := range comms {
		go func() {
			var err error
			halves[r], err = c.Split(ctx, r%2, n-r) // keys reverse the order within each half
			errs <- err
		}()
	}
	for range n {
		require.NoError(t, <-errs)
	}
	defer closeComms(t, ctx, halves)
	for r, h := range halves {
		members := (n + 1 - r%2) / 2
		require.Equal(t, members, h.Count(), "rank %d", r)
		var before int
		for q := r + 2; q < n; q += 2 {
			before++
		}
		assert.Equal(t, before, h.Rank(), "rank %d: ranked by key", r)
	}
	recv := make([]*alloc.Buffer[int32], n)
	fs := make([]*streams.Future, n)
	for r, h := range halves {
		recv[r] = zeros[int32](t, ctx, ss[r], 5)
		fs[r] = AllReduce(ctx, ss[r], h, upload(t, ctx, ss[r], []int32{int32(r), 1, 2, 3, 4}), recv[r], Sum)
	}
	waitAll(t, ctx, fs...)
	for r := range n {
		var sum int32
		for q := r % 2; q < n; q += 2 {
			sum += int32(q)
		}
		members := int32((n + 1 - r%2) / 2)
		assert.Equal(t, []int32{sum, members, 2 * members, 3 * members, 4 * members}, download(t, ctx, recv[r]), "rank %d", r)
	}
}

func suiteJoinWithoutPeersAborts(t *testing.T, ctx context.Context, devs []*device.Device, ss []*streams.Stream, opts ...Option) {
	id, err := NewID(ctx, devs[0])
	require.NoError(t, err)
	short, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	start := time.Now()
	// Only a non-blocking join can be cancelled: a blocking one parks the actor in NCCL.
	_, err = Join(short, devs[0], id, 2, 0, WithNonBlocking()) // rank 1 never joins
	require.ErrorIs(t, err, ErrAborted)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), time.Minute, "Join gave up at its deadline")
	// The device is usable, and so is NCCL on it.
	b := upload(t, ctx, ss[0], []float32{1, 2, 3})
	require.Equal(t, []float32{1, 2, 3}, download(t, ctx, b))
	comms, err := NewLocal(ctx, devs, opts...)
	require.NoError(t, err)
	closeComms(t, ctx, comms)
}
