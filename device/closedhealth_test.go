//go:build linux

package device_test

import (
	"context"
	"io"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/isolate"
	"github.com/gpuactor/gpuactor/sim"
)

// requireClosedNotFailed checks that dev reads as closed, not as failed, everywhere a service
// looks: Err, Health and Stats.
func requireClosedNotFailed(t *testing.T, ctx context.Context, dev *device.Device, when string) {
	t.Helper()
	require.NoError(t, dev.Err(), "%s: a closed device did not fail", when)
	err := dev.Health(ctx)
	require.ErrorIs(t, err, device.ErrClosed, "%s", when)
	require.NotErrorIs(t, err, device.ErrDeviceFailed, "%s", when)
	require.NotErrorIs(t, err, isolate.ErrWorkerDied, "%s", when)
	st := dev.Stats()
	require.Empty(t, st.Failure, "%s", when)
	require.True(t, st.Closed, "%s", when)
}

// A cleanly closed or shut-down device reads as closed, never as failed: at once, and after
// its worker's exit has long been seen. The worker's exit at Close's request used to fail an
// isolated device with "its worker process is gone … worker closed", every time once the exit
// was seen, and at once when it was seen before Close returned.
func TestClosedDeviceReadsClosedNotFailed(t *testing.T) {
	ctx := testdev.Ctx(t)
	machine := sim.New()
	kinds := []struct {
		name string
		opts []device.Option
		n    int
	}{
		{"in-process", []device.Option{device.WithSimulator(machine)}, 20},
		{"isolated", []device.Option{device.WithSimulator(machine), device.Isolated(isolate.WithStderr(io.Discard))}, 8},
	}
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			var closed []*device.Device
			for i := range k.n {
				dev, err := device.Open(ctx, 0, k.opts...)
				require.NoError(t, err)
				buf, err := dev.MallocBytes(ctx, 1024)
				require.NoError(t, err)
				require.NoError(t, buf.Close(ctx))
				require.NoError(t, dev.Health(ctx))
				if i%2 == 0 {
					require.NoError(t, dev.Close())
				} else {
					require.NoError(t, dev.Shutdown(ctx))
				}
				requireClosedNotFailed(t, ctx, dev, "at once")
				closed = append(closed, dev)
			}
			time.Sleep(300 * time.Millisecond) // every worker's exit has been seen by now
			for _, dev := range closed {
				requireClosedNotFailed(t, ctx, dev, "after 300 ms")
			}
		})
	}
}

// An isolated device whose worker is killed just before Close, or while Close runs, is failed
// with ErrWorkerDied once Close returns, every time; Close itself returns nil, as for any
// failed device.
func TestCloseAfterWorkerKilledReportsTheDeath(t *testing.T) {
	ctx := testdev.Ctx(t)
	opts := []device.Option{device.WithSimulator(sim.New()), device.Isolated(isolate.WithStderr(io.Discard))}
	for i := range 8 {
		dev, err := device.Open(ctx, 0, opts...)
		require.NoError(t, err)
		require.NoError(t, dev.Health(ctx))
		pid := dev.WorkerPID()
		closed := make(chan error, 1)
		if i%2 == 0 {
			require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
			go func() { closed <- dev.Close() }()
		} else {
			go func() { closed <- dev.Close() }()
			_ = syscall.Kill(pid, syscall.SIGKILL) // the worker may have exited, as asked, already
		}
		select {
		case err := <-closed:
			require.NoError(t, err, "iteration %d", i)
		case <-time.After(10 * time.Second):
			t.Fatalf("iteration %d: Close did not return", i)
		}
		// The kill may land after the worker exited at Close's request: then it closed cleanly.
		if err := dev.Err(); err != nil || i%2 == 0 {
			require.ErrorIs(t, err, isolate.ErrWorkerDied, "iteration %d", i)
			require.ErrorIs(t, err, device.ErrDeviceFailed, "iteration %d", i)
			require.ErrorIs(t, dev.Health(ctx), isolate.ErrWorkerDied, "iteration %d", i)
			assert.Contains(t, dev.Stats().Failure, "killed", "iteration %d", i)
		}
	}
}
