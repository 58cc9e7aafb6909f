package group_test

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/group"
	"github.com/gpuactor/gpuactor/internal/logging/logtest"
	"github.com/gpuactor/gpuactor/sim"
	"github.com/gpuactor/gpuactor/streams"
)

// One slog logger given to the group gets the whole story of a restart: the device leaving
// placement (the group's), its failure and restart (the supervisor's) and its reopening (the
// group's), each naming the device.
func TestLoggerSeesARestart(t *testing.T) {
	rec, log := logtest.New()
	r, devs := newReopener(t, 2)
	g := newGroup(t, devs, group.WithLogger(log.With("service", "test")), group.WithRestart(r.open, fast()...))

	r.failNow(t, devs[1])
	restartedAt(t, g, 1, 1)
	// The supervisor logs the restart once its start returned, after the swap.
	require.Eventually(t, func() bool { _, ok := rec.Find("supervise: restarted"); return ok }, 5*time.Second, time.Millisecond)
	for _, want := range []struct {
		msg   string
		level slog.Level
	}{
		{"group: device out of placement", slog.LevelWarn},
		{"supervise: child failed", slog.LevelError},
		{"group: device reopened", slog.LevelInfo},
		{"supervise: restarted", slog.LevelInfo},
	} {
		got, ok := rec.Find(want.msg)
		require.True(t, ok, "%q logged: %v", want.msg, rec.Messages())
		assert.Equal(t, want.level, got.Level, want.msg)
		assert.Equal(t, int64(1), got.Attrs["device"].Int64(), "%s names the device", want.msg)
		assert.Equal(t, "test", got.Attrs["service"].String(), "%s keeps the service's attributes", want.msg)
	}
	failed, _ := rec.Find("supervise: child failed")
	assert.ErrorIs(t, failed.Attrs["error"].Any().(error), device.ErrDeviceFailed)
	_, gaveUp := rec.Find("supervise: giving up")
	assert.False(t, gaveUp)
}

// An idempotent job whose device fails under it runs again elsewhere, and the group says so.
func TestLoggerSeesAJobRunAgain(t *testing.T) {
	ctx := context.Background()
	rec, log := logtest.New()
	machine := sim.New(sim.WithDevices(2), sim.WithConfinedFaults())
	var devs []*device.Device
	for i := range 2 {
		d, err := device.Open(ctx, i, simOptions(machine)...)
		require.NoError(t, err)
		t.Cleanup(func() { _ = d.Close() })
		devs = append(devs, d)
	}
	g := newGroup(t, devs, group.WithLogger(log))
	var tries atomic.Int32
	var failedOn atomic.Int32
	err := g.Submit(ctx, func(ctx context.Context, d *device.Device, s *streams.Stream) error {
		if tries.Add(1) == 1 {
			failedOn.Store(int32(d.Ordinal()))
			require.NoError(t, machine.Fail(d.Ordinal(), cudaerr.LaunchFailure))
		}
		return s.HostFunc(ctx, func() {}).Wait(ctx)
	}, group.Idempotent()).Wait(ctx)
	require.NoError(t, err, "the job ran again on the other device")
	require.Equal(t, int32(2), tries.Load())

	again, ok := rec.Find("group: job runs again on another device")
	require.True(t, ok, "logged: %v", rec.Messages())
	assert.Equal(t, slog.LevelInfo, again.Level)
	assert.Equal(t, int64(failedOn.Load()), again.Attrs["device"].Int64())
	assert.Equal(t, int64(1), again.Attrs["tries"].Int64())
	out, ok := rec.Find("group: device out of placement")
	require.True(t, ok, "logged: %v", rec.Messages())
	assert.Equal(t, int64(failedOn.Load()), out.Attrs["device"].Int64())
	n := 0
	for _, m := range rec.Messages() {
		if m == "group: device out of placement" {
			n++
		}
	}
	assert.Equal(t, 1, n, "a device leaves placement once")
}
