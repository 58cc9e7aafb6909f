package graphs_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/graphs"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/interop"
)

func TestAddCopyPeerHoldsTheOtherDevicesBuffer(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		devs := testdev.All(t, f.Ctx, f.Opts, f.Dev)
		other := devs[(f.Dev.Ordinal()+1)%len(devs)]
		want := make([]uint32, n)
		for i := range want {
			want[i] = uint32(7*i + 3)
		}
		src, err := other.MallocBytes(f.Ctx, 4*n)
		require.NoError(t, err)
		testdev.Write(t, f.Ctx, src, want)
		dst := f.buffer(t, n)
		g := f.graph(t)

		_, err = g.AddCopyPeer(f.Ctx, nil, dst, src)
		require.ErrorIs(t, err, interop.ErrNoPeerAccess, "access not enabled")
		_, err = g.AddCopyPeer(f.Ctx, nil, dst, f.buffer(t, n))
		require.ErrorIs(t, err, device.ErrInvalidArgument, "both on the graph's device")

		require.NoError(t, interop.EnablePeerAccess(f.Ctx, f.Dev, other))
		in, err := g.AddCopyPeer(f.Ctx, nil, dst, src)
		require.NoError(t, err)
		back, err := other.MallocBytes(f.Ctx, 4*n)
		require.NoError(t, err)
		_, err = g.AddCopyPeer(f.Ctx, graphs.After(in), back, dst)
		require.NoError(t, err)

		x, err := g.Instantiate(f.Ctx)
		require.NoError(t, err)
		s := f.Stream(t)
		f.launch(t, x, s)
		assert.Equal(t, want, f.read(t, dst))
		got := make([]uint32, n)
		testdev.Read(t, f.Ctx, got, back)
		assert.Equal(t, want, got)

		// Closing the other device's source waits for the graph and its Exec.
		closed := make(chan error, 1)
		go func() { closed <- src.Close(f.Ctx) }()
		testdev.Write(t, f.Ctx, dst, make([]uint32, n))
		f.launch(t, x, s)
		assert.Equal(t, want, f.read(t, dst), "the source is still allocated")
		require.NoError(t, x.Close(f.Ctx))
		require.NoError(t, g.Close(f.Ctx))
		require.NoError(t, <-closed)
	})
}
