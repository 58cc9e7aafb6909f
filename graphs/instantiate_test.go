package graphs_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/graphs"
	"github.com/gpuactor/gpuactor/internal/testdev"
)

func TestInstantiateErrorNamesTheNode(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		out := f.buffer(t, n)
		g := f.graph(t)
		k, err := g.AddKernel(f.Ctx, nil, f.add, cfg(n), out, uint32(1), int32(n))
		require.NoError(t, err)
		host, err := g.AddHost(f.Ctx, graphs.After(k), func() {})
		require.NoError(t, err)
		_, err = g.Instantiate(f.Ctx, graphs.DeviceLaunch())
		var ie *graphs.InstantiateError
		require.ErrorAs(t, err, &ie, "a host node cannot be launched from the device")
		assert.Same(t, host, ie.Node)
		assert.Contains(t, err.Error(), host.String())
		assert.Contains(t, ie.Reason, "not supported")

		// The graph is still usable: without the host node it instantiates for device launch.
		require.NoError(t, host.Destroy(f.Ctx))
		x, err := g.Instantiate(f.Ctx, graphs.DeviceLaunch(), graphs.Upload(f.Stream(t)))
		require.NoError(t, err)
		flags, err := x.Flags(f.Ctx)
		require.NoError(t, err)
		assert.Equal(t, graphs.ExecFlags{DeviceLaunch: true}, flags)
		require.NoError(t, x.Close(f.Ctx))
	})
}

func TestExecFlags(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		out := f.buffer(t, n)
		g := f.graph(t)
		_, err := g.AddKernel(f.Ctx, nil, f.add, cfg(n), out, uint32(1), int32(n))
		require.NoError(t, err)
		x, err := g.Instantiate(f.Ctx, graphs.AutoFreeOnLaunch(), graphs.UseNodePriority())
		require.NoError(t, err)
		flags, err := x.Flags(f.Ctx)
		require.NoError(t, err)
		assert.Equal(t, graphs.ExecFlags{AutoFreeOnLaunch: true}, flags, "the runtime does not report UseNodePriority")
		plain, err := g.Instantiate(f.Ctx)
		require.NoError(t, err)
		flags, err = plain.Flags(f.Ctx)
		require.NoError(t, err)
		assert.Equal(t, graphs.ExecFlags{}, flags)
		require.NoError(t, x.Close(f.Ctx))
		_, err = x.Flags(f.Ctx)
		require.ErrorIs(t, err, device.ErrClosed)
		require.NoError(t, plain.Close(f.Ctx))
	})
}

func TestDebugDOT(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		d := f.diamond(t)
		terse, err := d.g.DebugDOT(f.Ctx, 0)
		require.NoError(t, err)
		assert.Contains(t, terse, "digraph")
		full, err := d.g.DebugDOT(f.Ctx, graphs.DotVerbose|graphs.DotHandles)
		require.NoError(t, err)
		assert.Contains(t, full, "digraph")
		assert.Greater(t, len(full), len(terse), "the flags add detail")
		_, err = d.g.DebugDOT(f.Ctx, 1<<30)
		require.ErrorIs(t, err, device.ErrInvalidArgument)
	})
}

func TestGraphMemoryUsage(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.Stream(t)
		out := f.buffer(t, n)
		testdev.Write(t, f.Ctx, out, make([]uint32, n))
		g := f.graph(t)
		alloc, p, err := g.AddAlloc(f.Ctx, nil, 4*n)
		require.NoError(t, err)
		nine, err := g.AddKernel(f.Ctx, graphs.After(alloc), f.mul, cfg(n), p, uint32(0), int32(n))
		require.NoError(t, err)
		acc, err := g.AddKernel(f.Ctx, graphs.After(nine), f.acc, cfg(n), out, p, int32(n))
		require.NoError(t, err)
		_, err = g.AddFree(f.Ctx, graphs.After(acc), p)
		require.NoError(t, err)
		x, err := g.Instantiate(f.Ctx)
		require.NoError(t, err)
		require.NoError(t, graphs.ResetMemoryHighWatermarks(f.Ctx, f.Dev))
		// Graph allocations an earlier test left unfreed in this process stay counted (on a
		// GPU the context outlives the device handle): figures are compared with these.
		before, err := graphs.ReadMemoryUsage(f.Ctx, f.Dev)
		require.NoError(t, err)
		f.launch(t, x, s)

		u, err := graphs.ReadMemoryUsage(f.Ctx, f.Dev)
		require.NoError(t, err)
		// The launch freed what it allocated, but the memory stays associated with the Exec
		// (the runtime keeps it mapped for the next launch) until the Exec is destroyed.
		assert.GreaterOrEqual(t, u.Used, before.Used+4*n, "the freed allocation stays associated with the Exec")
		assert.GreaterOrEqual(t, u.UsedHigh, before.Used+4*n, "the launch's allocation")
		assert.GreaterOrEqual(t, u.Reserved, before.Used+4*n)
		assert.GreaterOrEqual(t, u.ReservedHigh, u.Reserved)

		require.NoError(t, x.Close(f.Ctx))
		require.NoError(t, g.Close(f.Ctx))
		require.NoError(t, f.Dev.Synchronize(f.Ctx))
		require.NoError(t, graphs.TrimMemory(f.Ctx, f.Dev))
		require.NoError(t, graphs.ResetMemoryHighWatermarks(f.Ctx, f.Dev))
		u, err = graphs.ReadMemoryUsage(f.Ctx, f.Dev)
		require.NoError(t, err)
		assert.Equal(t, before.Used, u.Used)
		assert.LessOrEqual(t, u.UsedHigh, u.Used, "reset")
		assert.LessOrEqual(t, u.ReservedHigh, u.Reserved, "reset")
		if before.Used == 0 {
			assert.Zero(t, u.Reserved, "nothing in use: the trim gave everything back")
		}

		_, err = graphs.ReadMemoryUsage(f.Ctx, nil)
		require.ErrorIs(t, err, device.ErrInvalidArgument)
	})
}
