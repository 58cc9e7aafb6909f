package graphs_test

import (
	"encoding/binary"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/graphs"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/streams"
)

func TestMemsetParamsRoundTripAndExecSet(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.Stream(t)
		b := f.buffer(t, n)
		ptr, err := b.DevicePtr(f.Ctx)
		require.NoError(t, err)
		g := f.graph(t)
		ms, err := g.AddMemset(f.Ctx, nil, b, 1)
		require.NoError(t, err)
		p, err := ms.MemsetParams(f.Ctx)
		require.NoError(t, err)
		assert.Equal(t, graphs.MemsetParams{Dst: ptr, Value: 1, ElementSize: 1, Width: 4 * n, Height: 1}, withoutPitch(p))

		require.NoError(t, ms.SetMemset32(f.Ctx, b, 7))
		p, err = ms.MemsetParams(f.Ctx)
		require.NoError(t, err)
		assert.Equal(t, graphs.MemsetParams{Dst: ptr, Value: 7, ElementSize: 4, Width: n, Height: 1}, withoutPitch(p))

		x, err := g.Instantiate(f.Ctx)
		require.NoError(t, err)
		f.launch(t, x, s)
		assert.Equal(t, testdev.Filled(n, 7), f.read(t, b))

		require.NoError(t, x.SetMemset32(f.Ctx, ms, b, 9))
		f.launch(t, x, s)
		assert.Equal(t, testdev.Filled(n, 9), f.read(t, b))
		p, err = ms.MemsetParams(f.Ctx)
		require.NoError(t, err)
		assert.Equal(t, uint32(7), p.Value, "the graph's node keeps its parameters")

		// A byte memset keeps its shape in the Exec; its value and destination change.
		c := f.buffer(t, n)
		g2 := f.graph(t)
		bytes, err := g2.AddMemset(f.Ctx, nil, b, 1)
		require.NoError(t, err)
		x2, err := g2.Instantiate(f.Ctx)
		require.NoError(t, err)
		require.NoError(t, x2.SetMemset(f.Ctx, bytes, c, 2))
		f.launch(t, x2, s)
		assert.Equal(t, testdev.Filled(n, 0x02020202), f.read(t, c))
		assert.Equal(t, testdev.Filled(n, 9), f.read(t, b), "the node's old destination is left alone")
		require.NoError(t, x2.Close(f.Ctx))

		odd, err := f.Dev.MallocBytes(f.Ctx, 6)
		require.NoError(t, err)
		require.ErrorIs(t, ms.SetMemset32(f.Ctx, odd, 1), device.ErrInvalidArgument)
		require.NoError(t, x.Close(f.Ctx))
	})
}

func TestCopyParamsRoundTripAndExecSet(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.Stream(t)
		src, a, c := f.buffer(t, n), f.buffer(t, n), f.buffer(t, n)
		want := make([]uint32, n)
		for i := range want {
			want[i] = uint32(i*3 + 1)
		}
		testdev.Write(t, f.Ctx, src, want)
		sp, err := src.DevicePtr(f.Ctx)
		require.NoError(t, err)
		cp, err := c.DevicePtr(f.Ctx)
		require.NoError(t, err)

		g := f.graph(t)
		node, err := g.AddCopy(f.Ctx, nil, a, src)
		require.NoError(t, err)
		require.NoError(t, node.SetCopy(f.Ctx, c, src))
		p, err := node.CopyParams(f.Ctx)
		require.NoError(t, err)
		assert.Equal(t, graphs.CopyParams{Dst: uintptr(cp), Src: uintptr(sp), Bytes: 4 * n, Kind: graphs.CopyDeviceToDevice}, p)

		x, err := g.Instantiate(f.Ctx)
		require.NoError(t, err)
		f.launch(t, x, s)
		assert.Equal(t, want, f.read(t, c))
		assert.Equal(t, make([]uint32, n), f.read(t, a), "the node copies into its new destination only")

		require.NoError(t, x.SetCopy(f.Ctx, node, a, src))
		f.launch(t, x, s)
		assert.Equal(t, want, f.read(t, a))

		// A download keeps its mapping in the Exec (device to pinned host); its buffers change.
		host, err := f.Dev.MallocPinnedBytes(f.Ctx, 4*n)
		require.NoError(t, err)
		host2, err := f.Dev.MallocPinnedBytes(f.Ctx, 4*n)
		require.NoError(t, err)
		down, err := g.AddCopyFromDevice(f.Ctx, graphs.After(node), host2, a)
		require.NoError(t, err)
		x2, err := g.Instantiate(f.Ctx)
		require.NoError(t, err)
		require.NoError(t, x2.SetCopyFromDevice(f.Ctx, down, host, src))
		require.Error(t, x2.SetCopyFromDevice(f.Ctx, node, host2, src), "a device-to-device copy cannot become a download")
		f.launch(t, x2, s)
		require.NoError(t, x2.Close(f.Ctx))
		got := make([]uint32, n)
		for i := range got {
			got[i] = binary.LittleEndian.Uint32(host.Host()[4*i:])
		}
		assert.Equal(t, want, got)

		small := f.buffer(t, 1)
		require.ErrorIs(t, node.SetCopy(f.Ctx, small, src), device.ErrOutOfRange)
		require.NoError(t, x.Close(f.Ctx))
	})
}

func TestKernelParamsSetOnGraph(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.Stream(t)
		b := f.buffer(t, n)
		testdev.Write(t, f.Ctx, b, testdev.Filled(n, 2))
		g := f.graph(t)
		k, err := g.AddKernel(f.Ctx, nil, f.add, cfg(n), b, uint32(1), int32(n))
		require.NoError(t, err)
		kp, err := k.KernelParams(f.Ctx)
		require.NoError(t, err)
		assert.Same(t, f.add, kp.Kernel)
		assert.Equal(t, cfg(n), kp.Config)
		assert.Equal(t, []any{b, uint32(1), int32(n)}, kp.Args)

		require.NoError(t, k.SetKernel(f.Ctx, f.mul, cfg(n), b, uint32(3), int32(n)))
		kp, err = k.KernelParams(f.Ctx)
		require.NoError(t, err)
		assert.Same(t, f.mul, kp.Kernel)
		x, err := g.Instantiate(f.Ctx)
		require.NoError(t, err)
		f.launch(t, x, s)
		assert.Equal(t, testdev.Filled(n, 6), f.read(t, b))

		require.ErrorIs(t, k.SetKernel(f.Ctx, f.mul, cfg(n), b), device.ErrKernelArgs, "too few arguments")
		f.launch(t, x, s)
		assert.Equal(t, testdev.Filled(n, 18), f.read(t, b), "a refused set changes nothing")
		require.NoError(t, x.Close(f.Ctx))
	})
}

func TestHostParamsReplaceFunction(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.Stream(t)
		var old, replaced, execOnly atomic.Int32
		g := f.graph(t)
		h, err := g.AddHost(f.Ctx, nil, func() { old.Add(1) })
		require.NoError(t, err)
		require.NoError(t, h.SetHost(f.Ctx, func() { replaced.Add(1) }))
		x, err := g.Instantiate(f.Ctx)
		require.NoError(t, err)
		f.launch(t, x, s)
		assert.Equal(t, int32(0), old.Load())
		assert.Equal(t, int32(1), replaced.Load())

		require.NoError(t, x.SetHost(f.Ctx, h, func() { execOnly.Add(1) }))
		f.launch(t, x, s)
		assert.Equal(t, int32(1), replaced.Load())
		assert.Equal(t, int32(1), execOnly.Load())

		require.NoError(t, x.SetHost(f.Ctx, h, func() { panic("boom") }))
		_, err = x.Launch(f.Ctx, s).Await(f.Ctx)
		var pe *actor.PanicError
		require.ErrorAs(t, err, &pe)
		assert.Equal(t, "boom", pe.Value)

		require.ErrorIs(t, h.SetHost(f.Ctx, nil), device.ErrInvalidArgument)
		require.NoError(t, x.Close(f.Ctx))
		require.NoError(t, g.Close(f.Ctx))
	})
}

func TestChildGraphEmbeddedAndExecSet(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.Stream(t)
		b := f.buffer(t, n)
		child := f.graph(t)
		_, err := child.AddMemset(f.Ctx, nil, b, 1)
		require.NoError(t, err)
		g := f.graph(t)
		cn, err := g.AddChild(f.Ctx, nil, child)
		require.NoError(t, err)

		emb, err := cn.ChildGraph(f.Ctx)
		require.NoError(t, err)
		again, err := cn.ChildGraph(f.Ctx)
		require.NoError(t, err)
		assert.Same(t, emb, again)
		require.ErrorIs(t, emb.Close(f.Ctx), device.ErrInvalidArgument, "the node owns it")
		nodes, err := emb.Nodes(f.Ctx)
		require.NoError(t, err)
		require.Len(t, nodes, 1)
		require.Equal(t, graphs.MemsetNode, nodes[0].Kind())
		require.NoError(t, nodes[0].SetMemset(f.Ctx, b, 4), "a change to the embedded graph changes the node")

		x, err := g.Instantiate(f.Ctx)
		require.NoError(t, err)
		f.launch(t, x, s)
		assert.Equal(t, testdev.Filled(n, 0x04040404), f.read(t, b))

		other := f.graph(t)
		_, err = other.AddMemset(f.Ctx, nil, b, 5)
		require.NoError(t, err)
		require.NoError(t, x.SetChild(f.Ctx, cn, other))
		f.launch(t, x, s)
		assert.Equal(t, testdev.Filled(n, 0x05050505), f.read(t, b))

		two := f.graph(t)
		m1, err := two.AddMemset(f.Ctx, nil, b, 6)
		require.NoError(t, err)
		_, err = two.AddMemset(f.Ctx, graphs.After(m1), b, 7)
		require.NoError(t, err)
		require.Error(t, x.SetChild(f.Ctx, cn, two), "another topology")
		f.launch(t, x, s)
		assert.Equal(t, testdev.Filled(n, 0x05050505), f.read(t, b), "the refused set changed nothing")

		require.NoError(t, x.Close(f.Ctx))
		require.NoError(t, g.Close(f.Ctx))
		_, err = emb.Nodes(f.Ctx)
		require.ErrorIs(t, err, device.ErrClosed, "the embedded graph closes with its root")
	})
}

func TestEventParamsRoundTrip(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		e1, err := streams.NewEvent(f.Ctx, f.Dev)
		require.NoError(t, err)
		e2, err := streams.NewEvent(f.Ctx, f.Dev)
		require.NoError(t, err)
		g := f.graph(t)
		rec, err := g.AddEventRecord(f.Ctx, nil, e1)
		require.NoError(t, err)
		wait, err := g.AddEventWait(f.Ctx, graphs.After(rec), e1)
		require.NoError(t, err)
		got, err := rec.Event(f.Ctx)
		require.NoError(t, err)
		assert.Same(t, e1, got)
		require.NoError(t, rec.SetEvent(f.Ctx, e2))
		require.NoError(t, wait.SetEvent(f.Ctx, e2))
		for _, node := range []*graphs.Node{rec, wait} {
			got, err = node.Event(f.Ctx)
			require.NoError(t, err)
			assert.Same(t, e2, got, node.String())
		}

		x, err := g.Instantiate(f.Ctx)
		require.NoError(t, err)
		require.NoError(t, x.SetEvent(f.Ctx, rec, e1))
		require.NoError(t, x.SetEvent(f.Ctx, wait, e1))
		s := f.Stream(t)
		f.launch(t, x, s)
		require.NoError(t, e1.Synchronize(f.Ctx))
		require.ErrorIs(t, x.SetEvent(f.Ctx, rec, nil), device.ErrInvalidArgument)
		require.NoError(t, x.Close(f.Ctx))
	})
}

func TestAllocAndFreeParams(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		g := f.graph(t)
		alloc, p, err := g.AddAlloc(f.Ctx, nil, 4096)
		require.NoError(t, err)
		free, err := g.AddFree(f.Ctx, graphs.After(alloc), p)
		require.NoError(t, err)
		ap, err := alloc.AllocParams(f.Ctx)
		require.NoError(t, err)
		assert.Equal(t, p, ap.Address)
		assert.Equal(t, uint64(4096), ap.Size)
		assert.Equal(t, f.Dev.Ordinal(), ap.Device)
		fp, err := free.FreeAddress(f.Ctx)
		require.NoError(t, err)
		assert.Equal(t, p, fp)
	})
}

func TestParamsOfWrongKindOrForeignNode(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.Stream(t)
		b := f.buffer(t, n)
		g := f.graph(t)
		ms, err := g.AddMemset(f.Ctx, nil, b, 1)
		require.NoError(t, err)

		_, err = ms.KernelParams(f.Ctx)
		require.ErrorIs(t, err, graphs.ErrWrongKind)
		assert.Contains(t, err.Error(), "memset")
		assert.Contains(t, err.Error(), "kernel")
		_, err = ms.CopyParams(f.Ctx)
		require.ErrorIs(t, err, graphs.ErrWrongKind)
		require.ErrorIs(t, ms.SetHost(f.Ctx, func() {}), graphs.ErrWrongKind)
		_, err = ms.ChildGraph(f.Ctx)
		require.ErrorIs(t, err, graphs.ErrWrongKind)
		_, err = ms.AllocParams(f.Ctx)
		require.ErrorIs(t, err, graphs.ErrWrongKind)

		x, err := g.Instantiate(f.Ctx)
		require.NoError(t, err)
		require.ErrorIs(t, x.SetCopy(f.Ctx, ms, b, b), graphs.ErrWrongKind)

		other := f.graph(t)
		foreign, err := other.AddMemset(f.Ctx, nil, b, 9)
		require.NoError(t, err)
		err = x.SetMemset(f.Ctx, foreign, b, 9)
		require.ErrorIs(t, err, graphs.ErrForeignNode)

		f.launch(t, x, s) // still usable, unchanged
		assert.Equal(t, testdev.Filled(n, 0x01010101), f.read(t, b))
		require.NoError(t, x.Close(f.Ctx))
		require.False(t, errors.Is(err, cudaerr.InvalidValue))
	})
}

// withoutPitch is p with Pitch zeroed: a one-row memset's pitch is the runtime's to choose.
func withoutPitch(p graphs.MemsetParams) graphs.MemsetParams {
	p.Pitch = 0
	return p
}

func TestKernelNodeAttributes(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		b := f.buffer(t, n)
		g := f.graph(t)
		withDomain := cfg(n)
		withDomain.MemSyncDomain = cuda.MemSyncDomainRemote
		k1, err := g.AddKernel(f.Ctx, nil, f.add, withDomain, b, uint32(1), int32(n))
		require.NoError(t, err)
		k2, err := g.AddKernel(f.Ctx, graphs.After(k1), f.add, cfg(n), b, uint32(1), int32(n))
		require.NoError(t, err)

		a, err := k1.Attributes(f.Ctx)
		require.NoError(t, err)
		assert.Equal(t, cuda.LaunchConfig{MemSyncDomain: cuda.MemSyncDomainRemote}, a)
		a, err = k2.Attributes(f.Ctx)
		require.NoError(t, err)
		assert.Equal(t, cuda.LaunchConfig{}, a)

		require.NoError(t, k2.CopyAttributes(f.Ctx, k1))
		a, err = k2.Attributes(f.Ctx)
		require.NoError(t, err)
		assert.Equal(t, cuda.MemSyncDomainRemote, a.MemSyncDomain)

		_, hi, err := streams.PriorityRange(f.Ctx, f.Dev)
		require.NoError(t, err)
		require.NoError(t, k1.SetAttributes(f.Ctx, cuda.LaunchConfig{Priority: hi}))
		a, err = k1.Attributes(f.Ctx)
		require.NoError(t, err)
		assert.Equal(t, cuda.LaunchConfig{MemSyncDomain: cuda.MemSyncDomainRemote, Priority: hi}, a, "the others keep their values")

		ms, err := g.AddMemset(f.Ctx, nil, f.buffer(t, n), 0)
		require.NoError(t, err)
		require.ErrorIs(t, k1.CopyAttributes(f.Ctx, ms), graphs.ErrWrongKind)
		_, err = ms.Attributes(f.Ctx)
		require.ErrorIs(t, err, graphs.ErrWrongKind)
	})
}
