package device_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/sim"
	"github.com/gpuactor/gpuactor/streams"
)

// A sticky fault names the launch it followed on its stream, and elsewhere says which call saw
// it rather than reading as that call's own failure: a faulting kernel on device 0 used to
// fail device 1 as "cudaMallocAsync: …", as if the allocation had faulted.
func TestStickyFaultNamesTheLaunchOrWhereItWasSeen(t *testing.T) {
	ctx := testdev.Ctx(t)
	machine := sim.New(sim.WithDevices(2)) // a fault is the whole process's, as on GPUs
	devs := testdev.All(t, ctx, []device.Option{device.WithSimulator(machine), device.WithKernelCache("")})
	d0, d1 := devs[0], devs[1]
	k := testdev.OOBKernel(t, ctx, d0)
	buf, err := d0.MallocBytes(ctx, 64)
	require.NoError(t, err)
	s0, err := streams.New(ctx, d0)
	require.NoError(t, err)
	s1, err := streams.New(ctx, d1)
	require.NoError(t, err)
	err = s0.Launch(ctx, k, cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(1)}, buf, int32(1<<20)).Wait(ctx)
	require.ErrorIs(t, err, device.ErrDeviceFailed)
	require.ErrorIs(t, err, cudaerr.IllegalAddress)
	assert.Contains(t, d0.Err().Error(), "sticky fault after the kernel oob launched on stream")

	_, f, err := alloc.MallocAsync[float32](ctx, s1, 16)
	if err == nil {
		err = f.Wait(ctx)
	}
	require.ErrorIs(t, err, device.ErrDeviceFailed)
	require.ErrorIs(t, err, cudaerr.IllegalAddress)
	msg := d1.Err().Error()
	assert.Contains(t, msg, "device 1: sticky fault seen at cudaMallocAsync (the call that met it, which need not have caused it)")
	assert.Contains(t, msg, `device 0 faulted (kernel "oob"`)
}
