package sim_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/logging/logtest"
	"github.com/gpuactor/gpuactor/sim"
	"github.com/gpuactor/gpuactor/streams"
)

func openAll(t *testing.T, s *sim.Simulator) []*device.Device {
	t.Helper()
	devs, err := device.OpenAll(t.Context(), device.WithSimulator(s), device.WithKernelCache(""))
	require.NoError(t, err)
	t.Cleanup(func() {
		for _, d := range devs {
			_ = d.Close()
		}
	})
	return devs
}

func TestNewMakesTheMachineAsked(t *testing.T) {
	assert.Equal(t, 2, sim.New().Devices(), "two by default")
	assert.Equal(t, 2, sim.New(sim.WithDevices(0)).Devices(), "n <= 0 keeps the default")
	s := sim.New(sim.WithDevices(3), sim.WithMemory(1<<30))
	require.Equal(t, 3, s.Devices())
	devs := openAll(t, s)
	require.Len(t, devs, 3)
	for _, d := range devs {
		assert.Equal(t, device.BackendSim, d.Backend())
		assert.Equal(t, uint64(1<<30), d.Properties().TotalMemory)
	}
}

func TestFailAndLose(t *testing.T) {
	ctx := context.Background()
	t.Run("a sticky fault fails the whole machine", func(t *testing.T) {
		s := sim.New()
		devs := openAll(t, s)
		require.NoError(t, s.Fail(0, cudaerr.IllegalAddress))
		for _, d := range devs {
			_, err := d.MallocBytes(ctx, 16)
			require.ErrorIs(t, err, device.ErrDeviceFailed, "%v", d)
			require.ErrorIs(t, err, cudaerr.IllegalAddress)
		}
	})
	t.Run("confined to its device", func(t *testing.T) {
		s := sim.New(sim.WithConfinedFaults())
		devs := openAll(t, s)
		require.NoError(t, s.Fail(1, cudaerr.Success), "a code that is not sticky becomes a launch failure")
		_, err := devs[1].MallocBytes(ctx, 16)
		require.ErrorIs(t, err, cudaerr.LaunchFailure)
		b, err := devs[0].MallocBytes(ctx, 16)
		require.NoError(t, err, "the other device goes on")
		require.NoError(t, b.Close(ctx))
	})
	t.Run("lost", func(t *testing.T) {
		s := sim.New()
		devs := openAll(t, s)
		require.NoError(t, s.Lose(0))
		_, err := devs[0].MallocBytes(ctx, 16)
		require.ErrorIs(t, err, cudaerr.DevicesUnavailable)
	})
	t.Run("no such device", func(t *testing.T) {
		s := sim.New()
		require.ErrorContains(t, s.Fail(2, cudaerr.LaunchFailure), "no device 2")
		require.ErrorContains(t, s.Lose(-1), "no device -1")
		devs := openAll(t, s)
		b, err := devs[0].MallocBytes(ctx, 16)
		require.NoError(t, err, "a bad ordinal fails nothing")
		require.NoError(t, b.Close(ctx))
	})
}

// A FaultPlan fails its device at the operation it names, and no other device.
func TestFaultPlan(t *testing.T) {
	ctx := context.Background()
	s := sim.New(sim.WithConfinedFaults(), sim.WithFaults(1, sim.FaultPlan{StickyAt: 3, Code: cudaerr.IllegalAddress}))
	devs := openAll(t, s)
	for _, d := range devs {
		st, err := streams.New(ctx, d)
		require.NoError(t, err)
		var errs []error
		for range 4 {
			errs = append(errs, st.HostFunc(ctx, func() {}).Wait(ctx))
		}
		if d.Ordinal() == 0 {
			for _, err := range errs {
				require.NoError(t, err)
			}
			continue
		}
		// Event records count as operations too, so which host function meets the fault
		// depends on how many watermarks the tracking recorded; the first runs before it.
		require.NoError(t, errs[0])
		require.ErrorIs(t, errs[3], cudaerr.IllegalAddress, "the plan's code")
		require.ErrorIs(t, errs[3], device.ErrDeviceFailed)
		require.ErrorIs(t, d.Err(), cudaerr.IllegalAddress)
	}
}

func TestLoggerGetsTheFaults(t *testing.T) {
	rec, log := logtest.New()
	s := sim.New(sim.WithLogger(log))
	require.NoError(t, s.Fail(0, cudaerr.LaunchFailure))
	got, ok := rec.Find("sim device fault: the device is now unusable")
	require.True(t, ok, "logged: %v", rec.Messages())
	assert.Equal(t, slog.LevelError, got.Level)
	assert.Equal(t, int64(0), got.Attrs["device"].Int64())
	assert.Equal(t, cudaerr.LaunchFailure.Name(), got.Attrs["code"].String())
}
