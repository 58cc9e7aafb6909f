package device_test

import (
	"context"
	"fmt"
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

// faultSim opens a simulated device and fails it for good with an out-of-bounds kernel.
func faultSim(t *testing.T, opts ...device.Option) (*device.Device, func()) {
	t.Helper()
	ctx := testdev.Ctx(t)
	dev, err := device.Open(ctx, 0, append([]device.Option{device.WithBackend(device.BackendSim), device.WithKernelCache("")}, opts...)...)
	require.NoError(t, err)
	k := testdev.OOBKernel(t, ctx, dev)
	return dev, func() {
		buf := mustMalloc(t, dev, 16)
		err := streams.Default(dev).Launch(ctx, k, cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(1)}, buf, int32(4)).Wait(ctx)
		require.ErrorIs(t, err, device.ErrDeviceFailed)
	}
}

// Close of a failed device forgets what it cannot free: its accounting goes back to zero.
func TestCloseOfAFailedDeviceForgetsItsMemory(t *testing.T) {
	ctx := context.Background()
	dev, fault := faultSim(t)
	_ = mustMalloc(t, dev, 1<<20)
	host, err := dev.MallocPinnedBytes(ctx, 1<<20)
	require.NoError(t, err)
	_ = host
	s, err := streams.New(ctx, dev)
	require.NoError(t, err)
	_, _, err = alloc.MallocAsync[byte](ctx, s, 1<<20)
	require.NoError(t, err)
	require.NoError(t, s.Synchronize(ctx))
	// In flight when the device fails: a stream-ordered free, and an allocation.
	freed, _, err := alloc.MallocAsync[byte](ctx, s, 1<<20)
	require.NoError(t, err)
	freed.CloseOn(ctx, s)
	_, _, err = alloc.MallocAsync[byte](ctx, s, 1<<20)
	require.NoError(t, err)
	fault()
	require.Error(t, dev.Err())
	// A buffer closed by its user after the failure.
	late, _, _ := alloc.MallocAsync[byte](ctx, s, 1<<20)
	if late != nil {
		_ = late.Close(ctx)
	}
	u := dev.Stats().Memory
	assert.Positive(t, u.DeviceBytes()+u.Pinned.Bytes, "still counted before Close")
	require.NoError(t, dev.Close(), "the failure is Err's to report, not Close's")
	u = dev.Stats().Memory
	assert.Zero(t, u.DeviceBytes(), "%+v", u)
	assert.Zero(t, u.Pinned.Bytes, "%+v", u)
	assert.Zero(t, u.Device.Count+u.Async.Count+u.Pinned.Count, "%+v", u)
}

// A fault met through one Device fails every Device opened on the same GPU: the sticky error
// poisons the GPU's context, which they share. It fails each of the process's other GPUs too,
// as the runtime does, unless the simulator confines faults (as isolated devices do on GPUs).
func TestFailureBelongsToTheGPU(t *testing.T) {
	for _, confined := range []bool{false, true} {
		t.Run(fmt.Sprintf("confined=%v", confined), func(t *testing.T) {
			ctx := testdev.Ctx(t)
			so := []sim.Option{sim.WithDevices(testdev.SimDevices)}
			if confined {
				so = append(so, sim.WithConfinedFaults())
			}
			machine := sim.New(so...)
			a, fault := faultSim(t, device.WithSimulator(machine))
			b, err := device.Open(ctx, 0, device.WithSimulator(machine))
			require.NoError(t, err)
			others := testdev.All(t, ctx, []device.Option{device.WithSimulator(machine)}, b)[1:]
			fault()
			require.ErrorIs(t, a.Err(), device.ErrDeviceFailed)
			require.ErrorIs(t, b.Err(), device.ErrDeviceFailed, "the other handle on the GPU")
			_, err = b.MallocBytes(ctx, 16)
			require.ErrorIs(t, err, device.ErrDeviceFailed)
			for _, other := range others {
				buf, err := other.MallocBytes(ctx, 16)
				if confined {
					require.NoError(t, err, "another GPU goes on: device %d", other.Ordinal())
					require.NoError(t, other.Err())
					require.NoError(t, buf.Close(ctx))
				} else {
					require.ErrorIs(t, err, device.ErrDeviceFailed, "another GPU of the process: device %d", other.Ordinal())
					require.ErrorIs(t, err, cudaerr.IllegalAddress, "with the fault's code")
					require.ErrorContains(t, err, "device 0 faulted")
					require.ErrorIs(t, other.Err(), device.ErrDeviceFailed)
				}
			}
			for _, d := range []*device.Device{a, b} {
				require.NoError(t, d.Close())
			}
		})
	}
}

// Every kind of pending operation that a failure ends reports the failure, with the code.
func TestPendingOperationsReportTheFailure(t *testing.T) {
	ctx := testdev.Ctx(t)
	dev, fault := faultSim(t)
	s, err := streams.New(ctx, dev)
	require.NoError(t, err)
	gate := make(chan struct{})
	pending := []interface{ Wait(context.Context) error }{s.HostFunc(ctx, func() { <-gate })}
	buf := mustMalloc(t, dev, 1<<20)
	host := make([]byte, 1<<20)
	pending = append(pending,
		streams.CopyToDevice(ctx, s, buf, host),
		s.Memset(ctx, buf, 0),
		streams.CopyFromDevice(ctx, s, host, buf))
	fault()
	close(gate)
	for i, f := range pending[1:] {
		err := f.Wait(ctx)
		require.ErrorIs(t, err, device.ErrDeviceFailed, "operation %d", i)
		require.ErrorIs(t, err, cudaerr.IllegalAddress, "operation %d", i)
	}
	require.NoError(t, dev.Close())
}

// The simulator's injected faults reach users as device failures: a sticky fault at the Nth
// operation, a lost device, a fault injected now.
func TestInjectedFaultsFailTheDevice(t *testing.T) {
	ctx := testdev.Ctx(t)
	// Confined: each device meets its own injected fault (TestFailureBelongsToTheGPU has a
	// sticky fault reaching the others).
	machine := sim.New(sim.WithDevices(3), sim.WithConfinedFaults(),
		sim.WithFaults(0, sim.FaultPlan{StickyAt: 3, Code: cudaerr.IllegalAddress}))
	devs, err := device.OpenAll(ctx, device.WithSimulator(machine))
	require.NoError(t, err)
	s, err := streams.New(ctx, devs[0])
	require.NoError(t, err)
	var errs []error
	for range 5 {
		errs = append(errs, s.HostFunc(ctx, func() {}).Wait(ctx))
	}
	require.NoError(t, errs[0])
	require.ErrorIs(t, errs[4], device.ErrDeviceFailed)
	require.ErrorIs(t, devs[0].Err(), cudaerr.IllegalAddress)
	require.ErrorContains(t, devs[0].Err(), "injected")

	require.NoError(t, machine.Lose(1))
	_, err = devs[1].MallocBytes(ctx, 16)
	require.ErrorIs(t, err, device.ErrDeviceFailed)
	require.ErrorIs(t, err, cudaerr.DevicesUnavailable)
	require.ErrorIs(t, devs[1].Err(), cudaerr.DevicesUnavailable, "a lost GPU fails the device")

	require.NoError(t, machine.Fail(2, cudaerr.MisalignedAddress))
	_, err = devs[2].MallocBytes(ctx, 16)
	require.ErrorIs(t, err, cudaerr.MisalignedAddress)
	for _, d := range devs {
		require.NoError(t, d.Close())
	}
}
