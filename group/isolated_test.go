package group_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/graphs"
	"github.com/gpuactor/gpuactor/group"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/internal/testleak"
	"github.com/gpuactor/gpuactor/internal/testproc"
	"github.com/gpuactor/gpuactor/isolate"
	"github.com/gpuactor/gpuactor/sim"
	"github.com/gpuactor/gpuactor/streams"
	"github.com/gpuactor/gpuactor/supervise"
)

// isolatedKernels are the simulator kernels of the isolated tests, which the test binary's
// workers run by name (TestMain).
var isolatedKernels = map[string]cuda.SimKernel{"add_u32": testdev.AddU32Sim}

// isolatedJob is one job of the kill test: a copy in, a launch and a graph of two more, a copy
// out, each result checked. A wrong answer is an error that says so, which the test refuses:
// a job may fail because its worker died, never return a wrong result.
func isolatedJob(seed uint32) group.Job {
	return func(ctx context.Context, d *device.Device, s *streams.Stream) error {
		mod, err := d.Compile(ctx, device.Source{Name: "add.cu", Code: testdev.AddU32, Sim: isolatedKernels})
		if err != nil {
			return err
		}
		k, err := mod.Kernel(ctx, "add_u32")
		if err != nil {
			return err
		}
		const n = 4096
		buf, err := d.MallocBytes(ctx, 4*n)
		if err != nil {
			return err
		}
		defer buf.Close(ctx)
		in := make([]uint32, n)
		for i := range in {
			in[i] = seed + uint32(i)
		}
		cfg := cuda.LaunchConfig{Grid: cuda.Dim(n / 256), Block: cuda.Dim(256)}
		streams.CopyToDevice(ctx, s, buf, in)
		s.Launch(ctx, k, cfg, buf, uint32(1), int32(n))
		g, err := graphs.Capture(ctx, s, func(ctx context.Context) error {
			s.Launch(ctx, k, cfg, buf, uint32(2), int32(n))
			s.Launch(ctx, k, cfg, buf, uint32(4), int32(n))
			return nil
		})
		if err != nil {
			return err
		}
		defer g.Close(ctx)
		x, err := g.Instantiate(ctx)
		if err != nil {
			return err
		}
		defer x.Close(ctx)
		x.Launch(ctx, s)
		out := make([]uint32, n)
		if err := streams.CopyFromDevice(ctx, s, out, buf).Wait(ctx); err != nil {
			return err
		}
		for i, v := range out {
			if want := seed + uint32(i) + 7; v != want {
				return fmt.Errorf("WRONG RESULT: word %d is %d, want %d", i, v, want)
			}
		}
		return nil
	}
}

// 1,000 jobs over four isolated simulated devices while their workers are killed at random:
// every job completes with the right answer or fails with an error saying its device's worker
// died; killed workers are replaced and take jobs again; nothing is left behind: no process,
// goroutine or file descriptor.
func TestJobsOverIsolatedDevicesWithWorkersKilledAtRandom(t *testing.T) {
	ctx := testdev.Ctx(t)
	procsBefore, fdsBefore, goroutinesBefore := testproc.Children(), testproc.OpenFDs(), testleak.Base()
	opts := []device.Option{device.WithSimulator(sim.New(sim.WithDevices(4))), device.WithKernelCache(t.TempDir()),
		device.Isolated(isolate.WithStderr(io.Discard))}
	devs, err := device.OpenAll(ctx, opts...)
	require.NoError(t, err)
	require.Len(t, devs, 4)
	var restarts atomic.Int64
	g, err := group.New(ctx, devs, group.WithStreams(4),
		group.WithRestart(func(ctx context.Context, failed *device.Device) (*device.Device, error) {
			return device.Open(ctx, failed.Ordinal(), opts...)
		}, supervise.WithRestarts(1000, time.Minute), supervise.OnRestart(func(int) { restarts.Add(1) })))
	require.NoError(t, err)

	// The killer: a worker of a random device, every few milliseconds, while jobs run, at most
	// maxKills times (so that a slow machine still completes most jobs).
	const maxKills = 60
	stop := make(chan struct{})
	var killed atomic.Int64
	var killer sync.WaitGroup
	killer.Add(1)
	go func() {
		defer killer.Done()
		rng := rand.New(rand.NewPCG(1, 2))
		for killed.Load() < maxKills {
			select {
			case <-stop:
				return
			case <-time.After(time.Duration(5+rng.IntN(25)) * time.Millisecond):
			}
			ds := g.Devices()
			if pid := ds[rng.IntN(len(ds))].WorkerPID(); pid > 0 && kill(pid) == nil {
				killed.Add(1)
			}
		}
	}()

	const jobs = 1000
	futs := make([]interface{ Wait(context.Context) error }, jobs)
	for i := range jobs {
		futs[i] = g.Submit(ctx, isolatedJob(uint32(i)*7919))
	}
	var ok, died int
	for i, f := range futs {
		err := f.Wait(ctx)
		switch {
		case err == nil:
			ok++
		case errors.Is(err, isolate.ErrWorkerDied) && errors.Is(err, device.ErrDeviceFailed):
			died++
		default:
			t.Errorf("job %d: not a clear failure: %v", i, err)
		}
		if err != nil && strings.Contains(err.Error(), "WRONG RESULT") {
			t.Errorf("job %d: %v", i, err)
		}
	}
	close(stop)
	killer.Wait()
	t.Logf("%d jobs: %d completed, %d failed as their worker died; %d workers killed, %d restarts; per device: %+v",
		jobs, ok, died, killed.Load(), restarts.Load(), g.Stats().Devices)
	assert.Equal(t, jobs, ok+died)
	assert.Positive(t, killed.Load(), "workers were killed")
	assert.Positive(t, restarts.Load(), "killed workers were replaced")
	assert.Greater(t, ok, jobs/2, "most jobs complete")

	// Every device works after the storm, in a worker of its own.
	require.Eventually(t, func() bool {
		for _, d := range g.Devices() {
			if d.Err() != nil {
				return false
			}
		}
		return true
	}, 10*time.Second, 10*time.Millisecond, "every killed worker replaced")
	for i := range 8 {
		require.NoError(t, g.Do(ctx, isolatedJob(uint32(i))), "a job after the kills")
	}

	require.NoError(t, g.Close(context.Background()))
	for _, d := range devs {
		_ = d.Close() // the group closed the ones it replaced; Close is idempotent
	}
	assert.Eventually(t, func() bool { return len(testproc.Children()) == len(procsBefore) }, 10*time.Second, 20*time.Millisecond,
		"no worker left: before %v, now %v", procsBefore, testproc.Children())
	assert.Eventually(t, func() bool { return testproc.OpenFDs() <= fdsBefore }, 10*time.Second, 20*time.Millisecond,
		"no file descriptor left (rings, sockets, shared memory): %d before, %d now: %v", fdsBefore, testproc.OpenFDs(), testproc.FDTargets())
	// One goroutine of slack, as before: the old check through assert.Eventually allowed two,
	// one of them its own condition's.
	testleak.Settle(t, goroutinesBefore+1)
}

// kill ends a process at once (SIGKILL on Unix).
func kill(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}
