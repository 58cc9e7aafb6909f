//go:build linux

package device_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
)

// A program on the GPU: compiled for the device's architecture once, loaded on every device
// of the host and on a device opened again after the first closed, each running saxpy right.
// With two GPUs or more the same architecture shares one compile.
func TestProgramOnEveryDeviceAndAReopenedOne(t *testing.T) {
	testdev.Backends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		prog := device.NewProgram(device.Source{Name: "saxpy_prog.cu", Code: saxpySource, Sim: saxpySim})
		defer func() { require.NoError(t, prog.Close(ctx)) }()
		first, err := device.Open(ctx, 0, opts...)
		require.NoError(t, err)
		k, err := prog.Kernel(ctx, first, "saxpy")
		require.NoError(t, err)
		runSaxpy(t, first, k)
		require.NoError(t, first.Close())

		dev := openDev(t, opts) // device 0 again: a new device, as a restart makes
		k, err = prog.Kernel(ctx, dev, "saxpy")
		require.NoError(t, err)
		runSaxpy(t, dev, k)
		assert.EqualValues(t, 1, device.ProgramCompilesForTest(prog), "the image is kept across the reopen")

		n, err := device.Count(ctx, opts...)
		require.NoError(t, err)
		if n < 2 {
			return
		}
		archs := map[int]bool{dev.Properties().ComputeCapability.Arch(): true}
		for _, d := range testdev.All(t, ctx, opts, dev) {
			k, err := prog.Kernel(ctx, d, "saxpy")
			require.NoError(t, err, "%v", d)
			runSaxpy(t, d, k)
			archs[d.Properties().ComputeCapability.Arch()] = true
		}
		assert.EqualValues(t, len(archs), device.ProgramCompilesForTest(prog), "one compile per architecture")
	})
}
