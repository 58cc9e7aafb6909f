package graphs_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/graphs"
	"github.com/gpuactor/gpuactor/internal/testdev"
)

// A kernel node takes the launch attributes a stream launch does: a cooperative node, a
// clustered one and one above 48 KiB of shared memory run; attributes the device cannot take
// are refused when the node is added, saying why.
func TestKernelNodesTakeLaunchAttributes(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		props := f.Dev.Properties()
		s := f.Stream(t)
		a := f.buffer(t, n)
		g := f.graph(t)
		set, err := g.AddMemset(f.Ctx, nil, a, 0)
		require.NoError(t, err)
		last := set
		steps := []cuda.LaunchConfig{cfg(n)}
		c := cfg(n)
		c.Priority = -1
		if props.CooperativeLaunch {
			c.Cooperative = true
		}
		steps = append(steps, c)
		if props.ComputeCapability.Major >= 9 && c.Grid.X%2 == 0 {
			c = cfg(n)
			c.Cluster = cuda.Dim(2)
			steps = append(steps, c)
		}
		c = cfg(n)
		c.SharedMem = 64 << 10
		steps = append(steps, c)
		for _, c := range steps {
			last, err = g.AddKernel(f.Ctx, graphs.After(last), f.add, c, a, uint32(1), int32(n))
			require.NoError(t, err, "%+v", c)
		}
		x, err := g.Instantiate(f.Ctx)
		require.NoError(t, err)
		f.launch(t, x, s)
		assert.Equal(t, testdev.Filled(n, uint32(len(steps))), f.read(t, a))

		bad := cfg(n)
		bad.Cluster = cuda.Dim(3)
		bad.Grid = cuda.Dim(4)
		_, err = g.AddKernel(f.Ctx, nil, f.add, bad, a, uint32(1), int32(n))
		require.ErrorIs(t, err, device.ErrLaunchConfig)
		assert.Contains(t, err.Error(), "does not divide")
		if props.CooperativeLaunch {
			huge := cfg(n)
			huge.Cooperative, huge.Grid = true, cuda.Dim(uint32(props.MultiProcessors*props.MaxThreadsPerSM/int(huge.Block.X)+1))
			_, err = g.AddKernel(f.Ctx, nil, f.add, huge, a, uint32(1), int32(n))
			require.ErrorIs(t, err, device.ErrLaunchConfig)
			assert.Contains(t, err.Error(), "can be resident at once")
		}
		testdev.RequireUsable(t, f.Dev)
	})
}
