package device_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/sim"
	"github.com/gpuactor/gpuactor/streams"
)

// neverEnds compiles, on dev, a simulated kernel that runs until release is closed: a kernel
// that never ends, as far as the test is concerned.
func neverEnds(t *testing.T, dev *device.Device, release chan struct{}) *device.Kernel {
	t.Helper()
	ctx := testdev.Ctx(t)
	mod, err := dev.Compile(ctx, device.Source{Name: "spin.cu", Code: `extern "C" __global__ void spin() { for (;;) {} }`,
		Sim: map[string]cuda.SimKernel{"spin": func(*cuda.KernelCall) error {
			<-release
			return nil
		}}})
	require.NoError(t, err)
	k, err := mod.Kernel(ctx, "spin")
	require.NoError(t, err)
	return k
}

// A kernel that never ends: the watchdog fails the device as stuck, the futures waiting on it
// fail, later calls are refused, every other device goes on, and Close returns at once,
// leaving nothing counted.
func TestWatchdogFailsAStuckDevice(t *testing.T) {
	ctx := testdev.Ctx(t)
	machine := sim.New(sim.WithDevices(testdev.SimDevices))
	dev, err := device.Open(ctx, 0, device.WithSimulator(machine), device.WithKernelCache(""), device.WithWatchdog(50*time.Millisecond))
	require.NoError(t, err)
	others := testdev.All(t, ctx, []device.Option{device.WithSimulator(machine)}, dev)[1:]
	release := make(chan struct{})
	defer close(release) // lets the simulator's stream goroutine end with the test
	k := neverEnds(t, dev, release)
	s, err := streams.New(ctx, dev)
	require.NoError(t, err)
	buf, _, err := alloc.MallocAsync[byte](ctx, s, 1<<20)
	require.NoError(t, err)
	_ = buf

	start := time.Now()
	launch := s.Launch(ctx, k, cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(1)})
	behind := s.Memset(ctx, buf, 0)
	err = launch.Wait(ctx)
	require.ErrorIs(t, err, device.ErrStuck)
	require.ErrorIs(t, err, device.ErrDeviceFailed)
	assert.Less(t, time.Since(start), 5*time.Second)
	require.ErrorIs(t, behind.Wait(ctx), device.ErrStuck, "work queued behind it fails too")
	require.ErrorIs(t, dev.Err(), device.ErrStuck)
	assert.Contains(t, dev.Stats().Failure, "stuck")
	_, err = dev.MallocBytes(ctx, 16)
	require.ErrorIs(t, err, device.ErrStuck, "later calls are refused")
	require.ErrorIs(t, dev.Health(ctx), device.ErrStuck)

	for _, other := range others {
		require.NoError(t, other.Health(ctx), "device %d goes on", other.Ordinal())
	}

	closed := make(chan error, 1)
	go func() { closed <- dev.Close() }()
	select {
	case err := <-closed:
		require.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("Close of a stuck device waited for the kernel")
	}
	assert.Equal(t, device.Usage{}, dev.Stats().Memory, "a stuck device's memory is forgotten, left to the process's exit")
}

// Without a watchdog a long kernel is not a failure; with one longer than the kernel, neither.
func TestWatchdogSparesWorkThatProgresses(t *testing.T) {
	ctx := testdev.Ctx(t)
	dev, err := device.Open(ctx, 0, device.WithSimulator(sim.New()), device.WithKernelCache(""), device.WithWatchdog(time.Second))
	require.NoError(t, err)
	defer dev.Close()
	release := make(chan struct{})
	k := neverEnds(t, dev, release)
	s := streams.Default(dev)
	f := s.Launch(ctx, k, cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(1)})
	time.AfterFunc(100*time.Millisecond, func() { close(release) })
	require.NoError(t, f.Wait(ctx))
	for range 50 {
		require.NoError(t, s.HostFunc(ctx, func() { time.Sleep(time.Millisecond) }).Wait(ctx))
	}
	require.NoError(t, dev.Err())
}

func TestHealth(t *testing.T) {
	testdev.Backends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		dev := testdev.Open(t, ctx, opts)
		for range 3 {
			require.NoError(t, dev.Health(ctx))
		}
	})
	t.Run("failed", func(t *testing.T) {
		dev, fault := faultSim(t)
		fault()
		require.ErrorIs(t, dev.Health(context.Background()), device.ErrDeviceFailed)
		require.NoError(t, dev.Close())
	})
	t.Run("no answer in time", func(t *testing.T) {
		ctx := testdev.Ctx(t)
		machine := sim.New(sim.WithFaults(0, sim.FaultPlan{SlowRate: 1, SlowBy: 300 * time.Millisecond}))
		dev, err := device.Open(ctx, 0, device.WithSimulator(machine))
		require.NoError(t, err)
		defer dev.Close()
		hctx, cancel := context.WithTimeout(ctx, 30*time.Millisecond)
		defer cancel()
		err = dev.Health(hctx)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.ErrorContains(t, err, "no answer")
		require.NoError(t, dev.Err(), "slow is not failed")
	})
}
