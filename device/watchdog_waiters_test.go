//go:build linux

package device_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/isolate"
	"github.com/gpuactor/gpuactor/sim"
	"github.com/gpuactor/gpuactor/streams"
)

// waiters starts, each in a goroutine of its own, the calls that wait for the GPU through the
// device's completion tracking — Device.Synchronize, Event.Synchronize and Buffer.Close —
// after the work queued on s, and returns their errors' channel.
func waiters(t *testing.T, ctx context.Context, dev *device.Device, s *streams.Stream, ev *streams.Event, buf *device.Buffer) <-chan error {
	t.Helper()
	s.Memset(ctx, buf, 0)
	s.Record(ctx, ev)
	errs := make(chan error, 3)
	go func() { errs <- dev.Synchronize(ctx) }()
	go func() { errs <- ev.Synchronize(ctx) }()
	go func() { errs <- buf.Close(ctx) }()
	return errs
}

// requireAllFail waits for the three waiters' errors, each a device failure, within bound.
func requireAllFail(t *testing.T, errs <-chan error, bound time.Duration, target error) {
	t.Helper()
	deadline := time.After(bound)
	for i := range 3 {
		select {
		case err := <-errs:
			require.ErrorIs(t, err, target, "waiter %d", i)
		case <-deadline:
			t.Fatalf("only %d of 3 waiters returned within %v", i, bound)
		}
	}
}

// requireCloses checks that dev's Close returns within bound.
func requireCloses(t *testing.T, dev *device.Device, bound time.Duration) {
	t.Helper()
	closed := make(chan error, 1)
	go func() { closed <- dev.Close() }()
	select {
	case <-closed:
	case <-time.After(bound):
		t.Fatalf("Close did not return within %v", bound)
	}
}

// When the watchdog fires, every call already waiting for the GPU returns with the stuck
// error, not only operations' futures: Synchronize, an event's Synchronize and a buffer's
// Close used to wait for good, even past Close.
func TestWatchdogReleasesEveryWaiter(t *testing.T) {
	ctx := testdev.Ctx(t)
	dev, err := device.Open(ctx, 0, device.WithSimulator(sim.New()), device.WithKernelCache(""), device.WithWatchdog(200*time.Millisecond))
	require.NoError(t, err)
	release := make(chan struct{})
	defer close(release)
	k := neverEnds(t, dev, release)
	s, err := streams.New(ctx, dev)
	require.NoError(t, err)
	ev, err := streams.NewEvent(ctx, dev)
	require.NoError(t, err)
	buf, err := dev.MallocBytes(ctx, 1<<10)
	require.NoError(t, err)
	s.Launch(ctx, k, cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(1)})
	errs := waiters(t, ctx, dev, s, ev, buf)
	requireAllFail(t, errs, 10*time.Second, device.ErrStuck)
	requireCloses(t, dev, 5*time.Second)
}

// frozenIsolated opens an isolated simulated device with opts, readies a stream, an event and
// a buffer, then freezes its worker (SIGSTOP) and returns them. The worker is killed at the
// test's end whatever happens.
func frozenIsolated(t *testing.T, ctx context.Context, opts ...device.Option) (*device.Device, *streams.Stream, *streams.Event, *device.Buffer) {
	t.Helper()
	dev, err := device.Open(ctx, 0, append([]device.Option{device.WithSimulator(sim.New()), device.WithKernelCache("")}, opts...)...)
	require.NoError(t, err)
	pid := dev.WorkerPID()
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	s, err := streams.New(ctx, dev)
	require.NoError(t, err)
	ev, err := streams.NewEvent(ctx, dev)
	require.NoError(t, err)
	buf, err := dev.MallocBytes(ctx, 1<<10)
	require.NoError(t, err)
	require.NoError(t, s.Synchronize(ctx))
	require.NoError(t, syscall.Kill(pid, syscall.SIGSTOP))
	waitStopped(t, pid)
	return dev, s, ev, buf
}

// waitStopped waits until every thread of process pid has stopped: kill returns once SIGSTOP
// is sent, and a thread busy on another CPU stops only when it next enters the kernel, in
// which time it may still answer a call the test expects to hang.
func waitStopped(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		running := ""
		tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
		require.NoError(t, err)
		for _, task := range tasks {
			stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/stat", pid, task.Name()))
			if err != nil {
				continue // the thread exited
			}
			// The state follows the command name, which is in parentheses and may hold any byte.
			if i := bytes.LastIndexByte(stat, ')'); i < 0 || i+2 >= len(stat) || stat[i+2] != 'T' && stat[i+2] != 't' {
				running = task.Name()
				break
			}
		}
		if running == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("thread %s of worker %d has not stopped 10 s after SIGSTOP", running, pid)
		}
		time.Sleep(time.Millisecond)
	}
}

// A frozen worker, with the heartbeat off: the watchdog (or the check of a call that waits on
// the worker, which the watchdog's deadline bounds) fails the device, every waiter returns,
// and Close returns.
func TestFrozenWorkerWithWatchdogReleasesEveryWaiter(t *testing.T) {
	ctx := testdev.Ctx(t)
	dev, s, ev, buf := frozenIsolated(t, ctx, device.WithWatchdog(300*time.Millisecond),
		device.Isolated(isolate.WithStderr(io.Discard), isolate.WithHeartbeat(0, 0)))
	errs := waiters(t, ctx, dev, s, ev, buf)
	requireAllFail(t, errs, 10*time.Second, device.ErrDeviceFailed)
	require.ErrorIs(t, dev.Err(), device.ErrDeviceFailed)
	requireCloses(t, dev, 10*time.Second)
}

// A frozen worker, with the heartbeat and the watchdog off: a call that waits on the worker
// still finds it frozen (after hungAfter of silence and as long again for a ping's answer),
// so the device fails as its worker's death, the waiters return, and so does Close. Without
// the check they waited, and Close with them, for good.
func TestFrozenWorkerWithoutHeartbeatStillCloses(t *testing.T) {
	ctx := testdev.Ctx(t)
	dev, s, ev, buf := frozenIsolated(t, ctx,
		device.Isolated(isolate.WithStderr(io.Discard), isolate.WithHeartbeat(0, 300*time.Millisecond)))
	errs := waiters(t, ctx, dev, s, ev, buf)
	blocked := make(chan error, 1)
	go func() { _, err := dev.MallocBytes(ctx, 64); blocked <- err }() // a call the worker must answer
	requireAllFail(t, errs, 10*time.Second, isolate.ErrWorkerDied)
	require.ErrorIs(t, <-blocked, device.ErrDeviceFailed)
	require.ErrorIs(t, dev.Err(), isolate.ErrWorkerDied)
	requireCloses(t, dev, 10*time.Second)
}
