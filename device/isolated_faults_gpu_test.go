//go:build linux

package device_test

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/internal/testgpu"
	"github.com/gpuactor/gpuactor/internal/testproc"
	"github.com/gpuactor/gpuactor/isolate"
	"github.com/gpuactor/gpuactor/streams"
)

// TestIsolatedFaultKinds is the isolated column of the fault table (TestFaultKinds): each kind
// of fault, provoked on an isolated device of GPU 0, then a good round trip on a fresh
// isolated device of the same GPU, in this same process. A kernel that never ends is caught
// by the watchdog, which ends its worker.
func TestIsolatedFaultKinds(t *testing.T) {
	testgpu.Need(t, testdev.GPU(), "the cuda backend sees no device")
	ctx := testdev.Ctx(t)
	opts := []device.Option{device.WithBackend(device.BackendCUDA), device.WithKernelCache(t.TempDir()),
		device.WithWatchdog(2 * time.Second), device.Isolated(isolate.WithStderr(io.Discard))}
	// Every other GPU runs in a worker of its own through every fault of GPU 0: in-process, a
	// sticky fault fails every GPU of the process (TestFaultKinds).
	var others []*device.Device
	var goods []*device.Kernel
	if n, err := device.Count(ctx, opts...); err == nil && n >= 2 {
		others, goods = openOthers(t, ctx, n, opts)
		defer func() {
			for _, d := range others {
				require.NoError(t, d.Close())
			}
		}()
	}
	var rows []string
	for _, kind := range faultKinds {
		if kind.resetFirst {
			continue // the in-process probe's own variant: an isolated device never resets
		}
		t.Run(kind.name, func(t *testing.T) {
			dev, err := device.Open(ctx, 0, opts...)
			require.NoError(t, err)
			pid := dev.WorkerPID()
			mod, good, err := compileGood(ctx, dev)
			require.NoError(t, err)
			require.NoError(t, goodRound(ctx, streams.Default(dev), dev, good), "before the fault")
			k, err := mod.Kernel(ctx, kind.kernel)
			require.NoError(t, err)
			buf, err := dev.MallocBytes(ctx, 64<<10)
			require.NoError(t, err)

			start := time.Now()
			launch := bounded(30*time.Second, func(ctx context.Context) error {
				return streams.Default(dev).Launch(ctx, k, cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(1)}, kind.args(buf)...).Wait(ctx)
			})
			failedIn := time.Since(start)
			exited := waitExit(pid, 20*time.Second)
			closed := bounded(10*time.Second, func(context.Context) error { return dev.Close() })

			recovered := bounded(60*time.Second, func(ctx context.Context) error {
				again, err := openRound(ctx, 0, opts)
				if again != nil {
					defer again.Close()
				}
				return err
			})
			recoveredIn := time.Since(start)
			other := "not run: one GPU"
			if others != nil {
				outs := boundedEach(30*time.Second, others, goods)
				for i, o := range outs {
					assert.True(t, o.OK, "device %d, in its own worker, after GPU 0's fault: %v", i+1, o)
				}
				other = othersCell(outs, "")
			}
			rows = append(rows, fmt.Sprintf("| %s | %v | %v | %v | %v | %v | %v | %s |", kind.name, launch, failedIn.Round(time.Millisecond),
				exited, closed, recovered, recoveredIn.Round(time.Millisecond), other))

			assert.True(t, launch.Failed, "the launch fails the device: %v", launch)
			if kind.want != 0 {
				assert.Equal(t, int32(kind.want), launch.Code, "the fault's own code: %v", launch)
			}
			assert.True(t, exited, "the worker ends (pid %d)", pid)
			assert.True(t, closed.OK, "Close: %v", closed)
			assert.True(t, recovered.OK, "a good round trip in a fresh worker: %v", recovered)
		})
	}
	t.Logf("isolated fault table:\n| kind | launch | failed after | worker ended | close | new worker: good round trip | recovered after | other devices |\n|---|---|---|---|---|---|---|---|\n%s", strings.Join(rows, "\n"))
}

// waitExit reports whether pid ended within d.
func waitExit(pid int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if !testproc.Alive(pid) {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}
