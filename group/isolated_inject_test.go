package group_test

import (
	"context"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/group"
	"github.com/gpuactor/gpuactor/isolate"
	"github.com/gpuactor/gpuactor/sim"
	"github.com/gpuactor/gpuactor/supervise"
)

// Faults injected into isolated simulated devices reach the worker running now, once: a fault
// plan given at open fails the first worker only, and Simulator.Fail and Lose fail the worker
// that serves the device then. Each time the group replaces the device, and the new worker
// stays healthy for the next 100 jobs, every answer checked. Fail and Lose used to do nothing
// to an isolated device, and a plan failed every new worker in turn, for good.
func TestInjectedFaultsOnIsolatedDevicesUnderRestart(t *testing.T) {
	ctx := context.Background()
	machine := sim.New(sim.WithDevices(2), sim.WithFaults(0, sim.FaultPlan{StickyAt: 20}))
	opts := []device.Option{device.WithSimulator(machine), device.WithKernelCache(t.TempDir()),
		device.Isolated(isolate.WithStderr(io.Discard))}
	devs, err := device.OpenAll(ctx, opts...)
	require.NoError(t, err)
	defer func() {
		for _, d := range devs {
			_ = d.Close()
		}
	}()
	var restarts atomic.Int64
	g, err := group.New(ctx, devs, group.WithRestart(func(ctx context.Context, failed *device.Device) (*device.Device, error) {
		return device.Open(ctx, failed.Ordinal(), opts...)
	}, supervise.WithRestarts(100, time.Minute), supervise.WithBackoff(time.Millisecond), supervise.OnRestart(func(int) { restarts.Add(1) })))
	require.NoError(t, err)
	defer func() { require.NoError(t, g.Close(context.Background())) }()

	// replaced waits for the group to have replaced ordinal's device old with a healthy one,
	// then runs 100 jobs, each of which must succeed, and checks that nothing failed since.
	replaced := func(what string, ordinal int, old *device.Device, before int64) {
		t.Helper()
		require.Eventually(t, func() bool {
			d := g.Devices()[ordinal]
			return d != old && d.Err() == nil
		}, 20*time.Second, 5*time.Millisecond, "%s: device %d replaced", what, ordinal)
		for i := range 100 {
			require.NoError(t, g.Do(ctx, isolatedJob(uint32(i)*31)), "%s: job %d after the restart", what, i)
		}
		assert.Equal(t, before+1, restarts.Load(), "%s: one restart, no crash loop", what)
		for _, d := range g.Devices() {
			require.NoError(t, d.Health(ctx), "%s: device %d healthy", what, d.Ordinal())
		}
	}

	// The plan: device 0's first worker fails at its 20th operation.
	old := g.Devices()[0]
	before := restarts.Load()
	for i := 0; old.Err() == nil && i < 1000; i++ {
		_ = g.Do(ctx, isolatedJob(uint32(i)))
	}
	require.ErrorIs(t, old.Err(), cudaerr.LaunchFailure, "the plan failed the first worker")
	replaced("the plan", 0, old, before)

	inject := func(what string, ordinal int, fn func() error, code cudaerr.Code) {
		t.Helper()
		old := g.Devices()[ordinal]
		before := restarts.Load()
		require.NoError(t, fn(), what)
		err := old.Health(ctx) // the device meets the fault at its next operation
		require.ErrorIs(t, err, device.ErrDeviceFailed, what)
		require.ErrorIs(t, err, code, what)
		replaced(what, ordinal, old, before)
	}
	inject("Fail", 0, func() error { return machine.Fail(0, cudaerr.IllegalAddress) }, cudaerr.IllegalAddress)
	inject("Lose", 1, func() error { return machine.Lose(1) }, cudaerr.DevicesUnavailable)

	// The machine in this process was left alone: its own devices still work.
	inproc, err := device.Open(ctx, 0, device.WithSimulator(machine))
	require.NoError(t, err)
	require.NoError(t, inproc.Health(ctx))
	require.NoError(t, inproc.Close())
	require.Error(t, machine.Fail(2, cudaerr.IllegalAddress), "no device 2")
}
