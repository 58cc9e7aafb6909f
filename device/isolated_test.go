//go:build linux

package device_test

import (
	"context"
	"errors"
	"io"
	"os"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/graphs"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/internal/testproc"
	"github.com/gpuactor/gpuactor/interop"
	"github.com/gpuactor/gpuactor/isolate"
	"github.com/gpuactor/gpuactor/sim"
	"github.com/gpuactor/gpuactor/streams"
	"github.com/gpuactor/gpuactor/supervise"
)

// isolatedBackends runs fn on an isolated device over the simulator and over the GPU.
func isolatedBackends(t *testing.T, fn func(t *testing.T, opts []device.Option)) {
	testdev.Backends(t, func(t *testing.T, opts []device.Option) {
		fn(t, append(opts, device.Isolated(isolate.WithStderr(io.Discard))))
	})
}

// saxpyRound runs y = a·x + y over n floats on a new stream of dev and checks every element.
func saxpyRound(ctx context.Context, dev *device.Device, n int) error {
	mod, err := dev.Compile(ctx, device.Source{Name: "saxpy_test.cu", Code: saxpySource, Sim: saxpySim})
	if err != nil {
		return err
	}
	k, err := mod.Kernel(ctx, "saxpy")
	if err != nil {
		return err
	}
	s, err := streams.New(ctx, dev)
	if err != nil {
		return err
	}
	defer s.Close(ctx)
	x, y := make([]float32, n), make([]float32, n)
	for i := range x {
		x[i], y[i] = float32(i), float32(2*i)
	}
	dx, err := dev.MallocBytes(ctx, uint64(4*n))
	if err != nil {
		return err
	}
	defer dx.Close(ctx)
	dy, err := dev.MallocBytes(ctx, uint64(4*n))
	if err != nil {
		return err
	}
	defer dy.Close(ctx)
	streams.CopyToDevice(ctx, s, dx, x)
	streams.CopyToDevice(ctx, s, dy, y)
	s.Launch(ctx, k, cuda.LaunchConfig{Grid: cuda.Dim(uint32((n + 255) / 256)), Block: cuda.Dim(256)}, int32(n), float32(3), dx, dy)
	out := make([]float32, n)
	if err := streams.CopyFromDevice(ctx, s, out, dy).Wait(ctx); err != nil {
		return err
	}
	for i, v := range out {
		if want := float32(3*float32(i)) + float32(2*i); v != want {
			return errors.New("element " + strconv.Itoa(i) + " is " + strconv.FormatFloat(float64(v), 'g', -1, 32))
		}
	}
	return nil
}

func TestIsolatedDeviceRunsSaxpyInAWorker(t *testing.T) {
	isolatedBackends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		dev := openDev(t, opts)
		assert.True(t, dev.Isolated())
		st := dev.Stats()
		assert.Equal(t, dev.Backend(), st.Backend, "Stats names the backend as Backend does, not the worker's transport")
		assert.True(t, st.Isolated)
		assert.Equal(t, string(dev.Backend()), dev.Properties().Backend)
		pid := dev.WorkerPID()
		assert.NotZero(t, pid)
		assert.NotEqual(t, os.Getpid(), pid)
		assert.NotEmpty(t, dev.Properties().Name)
		require.NoError(t, saxpyRound(ctx, dev, 1<<20))
		require.NoError(t, saxpyRound(ctx, dev, 1000)) // the module again: from the cache
	})
}

// A device in process says so.
func TestInProcessDeviceIsNotIsolated(t *testing.T) {
	dev := openDev(t, []device.Option{device.WithSimulator(sim.New())})
	assert.False(t, dev.Isolated())
	assert.Zero(t, dev.WorkerPID())
	assert.Equal(t, device.BackendSim, dev.Stats().Backend)
	assert.False(t, dev.Stats().Isolated)
}

// GPUACTOR_SIM_DEVICES sets how many devices the default simulated machine has, in process
// and for isolated devices, whose workers simulate the machine their parent described.
func TestSimDevicesFromTheEnvironment(t *testing.T) {
	ctx := testdev.Ctx(t)
	t.Setenv(device.EnvSimDevices, "3")
	for _, opts := range [][]device.Option{
		{device.WithBackend(device.BackendSim)},
		{device.WithBackend(device.BackendSim), device.Isolated()},
	} {
		n, err := device.Count(ctx, opts...)
		require.NoError(t, err)
		assert.Equal(t, 3, n)
		devs, err := device.OpenAll(ctx, opts...)
		require.NoError(t, err)
		require.Len(t, devs, 3)
		for _, d := range devs {
			require.NoError(t, d.Close())
		}
	}
	for _, bad := range []string{"0", "-1", "two", "100000"} {
		t.Setenv(device.EnvSimDevices, bad)
		_, err := device.OpenAll(ctx, device.WithBackend(device.BackendSim))
		require.ErrorIs(t, err, device.ErrBackend, bad)
		require.ErrorContains(t, err, device.EnvSimDevices)
		_, err = device.Open(ctx, 0, device.WithBackend(device.BackendSim), device.Isolated())
		require.ErrorIs(t, err, device.ErrBackend, bad)
	}
}

// Stream-ordered allocation, pinned host memory and a captured graph work through the worker.
func TestIsolatedAllocAndGraphs(t *testing.T) {
	isolatedBackends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		dev := openDev(t, opts)
		s, err := streams.New(ctx, dev)
		require.NoError(t, err)
		defer s.Close(ctx)

		buf, _, err := alloc.MallocAsync[uint32](ctx, s, 4096)
		require.NoError(t, err)
		pinned, err := alloc.MallocPinned[uint32](ctx, dev, 4096)
		require.NoError(t, err)
		defer pinned.Close(ctx)
		for i := range pinned.Host() {
			pinned.Host()[i] = uint32(i)
		}
		mod, err := dev.Compile(ctx, device.Source{Name: "add.cu", Code: testdev.AddU32, Sim: map[string]cuda.SimKernel{"add_u32": testdev.AddU32Sim}})
		require.NoError(t, err)
		k, err := mod.Kernel(ctx, "add_u32")
		require.NoError(t, err)
		g, err := graphs.Capture(ctx, s, func(ctx context.Context) error {
			s.Launch(ctx, k, cuda.LaunchConfig{Grid: cuda.Dim(16), Block: cuda.Dim(256)}, buf, uint32(5), int32(4096))
			return nil
		})
		require.NoError(t, err)
		defer g.Close(ctx)
		exec, err := g.Instantiate(ctx)
		require.NoError(t, err)
		defer exec.Close(ctx)

		require.NoError(t, streams.CopyToDevice(ctx, s, buf, pinned.Host()).Wait(ctx))
		for range 3 {
			exec.Launch(ctx, s)
		}
		out := make([]uint32, 4096)
		require.NoError(t, streams.CopyFromDevice(ctx, s, out, buf).Wait(ctx))
		for i, v := range out {
			require.Equal(t, uint32(i)+15, v, "word %d", i)
		}
		require.NoError(t, buf.CloseOn(ctx, s).Wait(ctx))
	})
}

// What a worker cannot do is refused, naming it, and the device goes on.
func TestIsolatedRefusesWhatCannotCross(t *testing.T) {
	isolatedBackends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		dev := openDev(t, opts)
		_, err := alloc.Register(ctx, dev, make([]float32, 1024))
		require.ErrorIs(t, err, cudaerr.NotSupported)
		assert.Contains(t, err.Error(), "isolated device")
		err = streams.Default(dev).HostFunc(ctx, func() {}).Wait(ctx)
		require.ErrorIs(t, err, cudaerr.NotSupported)
		_, err = interop.DriverEntryPoint(ctx, dev, "cuDriverGetVersion")
		require.ErrorIs(t, err, cudaerr.NotSupported)
		assert.Contains(t, err.Error(), "worker's process")
		assert.NoError(t, dev.Err())
		require.NoError(t, saxpyRound(ctx, dev, 100))
	})
}

// Pinned memory past what the machine has is refused on an isolated device as it is in
// process: the runtime's out-of-memory error naming the size, nothing counted, and the device
// still usable.
func TestIsolatedPinnedPastTheMachineIsRefused(t *testing.T) {
	isolatedBackends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		dev := openDev(t, opts)
		const tib = 1 << 40
		_, err := dev.MallocPinnedBytes(ctx, tib)
		require.ErrorIs(t, err, cudaerr.MemoryAllocation)
		require.ErrorContains(t, err, "1099511627776")
		_, err = alloc.PinnedPoolOf(dev).Get(ctx, tib)
		require.ErrorIs(t, err, cudaerr.MemoryAllocation)
		assert.Zero(t, dev.Stats().Memory.Pinned.Count)
		require.NoError(t, dev.Err())
		p, err := alloc.MallocPinned[byte](ctx, dev, 4096)
		require.NoError(t, err, "a sane size still works")
		require.NoError(t, p.Close(ctx))
		require.NoError(t, saxpyRound(ctx, dev, 100))
	})
}

// A simulator kernel the worker has not been given fails the module's load, saying which.
func TestIsolatedUnknownSimKernel(t *testing.T) {
	ctx := testdev.Ctx(t)
	dev := openDev(t, []device.Option{device.WithSimulator(sim.New()), device.Isolated()})
	_, err := dev.Compile(ctx, device.Source{Name: "x.cu", Code: `extern "C" __global__ void not_registered() {}`, Sim: map[string]cuda.SimKernel{"not_registered": nil}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"not_registered" not registered in the worker`)
	require.NoError(t, saxpyRound(ctx, dev, 100))
}

// A worker killed with work in flight fails every pending future with isolate.ErrWorkerDied (and
// ErrDeviceFailed) at once; the device closes promptly; opening it again gives a fresh worker
// with the GPU, in the same process.
func TestIsolatedKilledWorkerFailsPendingThenReopens(t *testing.T) {
	machine := sim.New(sim.WithSlowdown(0, 200)) // operations slow enough to be in flight
	opts := []device.Option{device.WithSimulator(machine), device.Isolated(isolate.WithStderr(io.Discard)), device.WithKernelCache(t.TempDir())}
	ctx := testdev.Ctx(t)
	dev, err := device.Open(ctx, 0, opts...)
	require.NoError(t, err)
	s, err := streams.New(ctx, dev)
	require.NoError(t, err)
	buf, err := dev.MallocBytes(ctx, 64<<20)
	require.NoError(t, err)
	var futs []*streams.Future
	for range 32 {
		futs = append(futs, s.Memset(ctx, buf, 1))
	}
	pid := dev.WorkerPID()
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
	killed := time.Now()
	for i, f := range futs {
		err := f.Wait(ctx)
		if err == nil {
			continue // it ran before the kill
		}
		require.ErrorIs(t, err, isolate.ErrWorkerDied, "future %d", i)
		require.ErrorIs(t, err, device.ErrDeviceFailed, "future %d", i)
	}
	require.ErrorIs(t, futs[len(futs)-1].Wait(ctx), isolate.ErrWorkerDied, "the last memset cannot have run")
	assert.Less(t, time.Since(killed), 2*time.Second)
	require.ErrorIs(t, dev.Err(), isolate.ErrWorkerDied)
	assert.Contains(t, dev.Err().Error(), "killed")
	_, err = dev.MallocBytes(ctx, 16)
	require.ErrorIs(t, err, device.ErrDeviceFailed)

	closed := make(chan error, 1)
	go func() { closed <- dev.Close() }()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close of a device whose worker died did not return")
	}
	assert.NotContains(t, testproc.Children(), pid, "the killed worker is reaped")

	again, err := device.Open(ctx, 0, opts...)
	require.NoError(t, err)
	defer func() { require.NoError(t, again.Close()) }()
	assert.NotEqual(t, pid, again.WorkerPID())
	require.NoError(t, saxpyRound(ctx, again, 4096))
}

// A sticky fault in the worker fails the device with the fault's own error; the worker exits,
// and the GPU is usable again from a new worker in the same process.
func TestIsolatedStickyFaultThenFreshWorker(t *testing.T) {
	isolatedBackends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		dev, err := device.Open(ctx, 0, opts...)
		require.NoError(t, err)
		pid := dev.WorkerPID()
		require.NoError(t, saxpyRound(ctx, dev, 1024))
		err = faultOnce(t, ctx, dev)
		require.ErrorIs(t, err, device.ErrDeviceFailed)
		var ce *cudaerr.Error
		require.ErrorAs(t, err, &ce, "the fault's own CUDA error: %v", err)
		assert.True(t, ce.Code.Sticky(), "%v", ce.Code)
		require.Eventually(t, func() bool { return !testproc.Alive(pid) }, 10*time.Second, 10*time.Millisecond,
			"the worker exits after a sticky fault")
		require.NoError(t, dev.Close())

		again, err := device.Open(ctx, 0, opts...)
		require.NoError(t, err)
		defer func() { require.NoError(t, again.Close()) }()
		require.NoError(t, saxpyRound(ctx, again, 1<<20), "a fresh worker on the same GPU, same process")
	})
}

// faultOnce launches a kernel that faults for good: on the GPU a store a TiB past an
// allocation, on the simulator one past its end.
func faultOnce(t *testing.T, ctx context.Context, dev *device.Device) error {
	buf, err := dev.MallocBytes(ctx, 64<<10)
	require.NoError(t, err)
	if dev.Backend() == device.BackendSim {
		k := testdev.OOBKernel(t, ctx, dev)
		return streams.Default(dev).Launch(ctx, k, cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(1)}, buf, int32(16<<10)).Wait(ctx)
	}
	mod, err := dev.Compile(ctx, device.Source{Name: "faults.cu", Code: faultSource})
	require.NoError(t, err)
	k, err := mod.Kernel(ctx, "oob_store")
	require.NoError(t, err)
	return streams.Default(dev).Launch(ctx, k, cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(1)}, buf, int64(1)<<38).Wait(ctx)
}

// A supervisor of an isolated device restarts it for real: after the worker is killed, the
// supervisor's next device runs work.
func TestSupervisedIsolatedDeviceRestarts(t *testing.T) {
	ctx := testdev.Ctx(t)
	machine := sim.New()
	cache := t.TempDir()
	restarted := make(chan int, 4)
	sup, err := supervise.New(ctx, func(ctx context.Context) (*device.Device, error) {
		return device.Open(ctx, 0, device.WithSimulator(machine), device.WithKernelCache(cache), device.Isolated(isolate.WithStderr(io.Discard)))
	}, supervise.WithRestarts(3, time.Minute), supervise.WithCheckEvery(5*time.Millisecond),
		supervise.OnRestart(func(gen int) { restarted <- gen }))
	require.NoError(t, err)
	defer func() { require.NoError(t, sup.Close()) }()
	first, err := sup.Current()
	require.NoError(t, err)
	require.NoError(t, saxpyRound(ctx, first, 1000))
	require.NoError(t, syscall.Kill(first.WorkerPID(), syscall.SIGKILL))
	select {
	case gen := <-restarted:
		assert.Equal(t, 2, gen, "the first worker's device is generation 1")
	case <-time.After(10 * time.Second):
		t.Fatal("no restart")
	}
	next, err := sup.Current()
	require.NoError(t, err)
	require.NotSame(t, first, next)
	require.NoError(t, saxpyRound(ctx, next, 1000))
}

// A worker that cannot start fails Open with isolate.ErrWorkerStart and a reason, leaving nothing
// running; so does a context that ends while it starts.
func TestIsolatedWorkerThatNeverStarts(t *testing.T) {
	ctx := testdev.Ctx(t)
	machine := device.WithSimulator(sim.New())
	before := testproc.Children()
	_, err := device.Open(ctx, 0, machine, device.Isolated(isolate.WithBinary("/nonexistent/worker")))
	require.ErrorIs(t, err, isolate.ErrWorkerStart)
	assert.Contains(t, err.Error(), "/nonexistent/worker")

	_, err = device.Open(ctx, 0, machine, device.Isolated(isolate.WithBinary("/bin/true"), isolate.WithStderr(io.Discard)))
	require.ErrorIs(t, err, isolate.ErrWorkerStart)
	assert.Contains(t, err.Error(), "exited before")
	assert.Contains(t, err.Error(), "isolate.Main")

	_, err = device.Open(ctx, 0, machine, device.Isolated(isolate.WithBinary("/bin/sleep", "60"), isolate.WithStartTimeout(200*time.Millisecond)))
	require.ErrorIs(t, err, isolate.ErrWorkerStart)

	cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	_, err = device.Open(cctx, 0, machine, device.Isolated(isolate.WithBinary("/bin/sleep", "60")))
	require.Error(t, err)
	assert.ElementsMatch(t, before, testproc.Children(), "no worker left running")

	_, err = device.Open(ctx, 7, machine, device.Isolated())
	require.Error(t, err, "an ordinal the worker's machine lacks")
	assert.Contains(t, err.Error(), "ordinal 7")
	assert.ElementsMatch(t, before, testproc.Children(), "no worker left running")
}

// OpenAll gives every device a worker of its own (every GPU of the machine on the cuda
// backend); closing them reaps every worker.
func TestOpenAllIsolated(t *testing.T) {
	isolatedBackends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		n, err := device.Count(ctx, opts...)
		require.NoError(t, err)
		before := testproc.Children()
		devs, err := device.OpenAll(ctx, opts...)
		require.NoError(t, err)
		require.Len(t, devs, n)
		pids := map[int]bool{}
		var wg sync.WaitGroup
		for i, d := range devs {
			assert.Equal(t, i, d.Ordinal())
			pids[d.WorkerPID()] = true
			wg.Add(1)
			go func() {
				defer wg.Done()
				assert.NoError(t, saxpyRound(ctx, d, 10000))
			}()
		}
		wg.Wait()
		assert.Len(t, pids, n, "a worker per device")
		for _, d := range devs {
			require.NoError(t, d.Close())
		}
		assert.ElementsMatch(t, before, testproc.Children())
	})
}

// A kernel that never ends leaves a GPU stuck for as long as the process holding it lives. On
// an isolated device the watchdog fails the device and ends its worker, so the GPU is free at
// once: a new worker on it runs work, in the same process.
func TestIsolatedStuckDeviceEndsItsWorker(t *testing.T) {
	isolatedBackends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		dev, err := device.Open(ctx, 0, append(opts, device.WithWatchdog(500*time.Millisecond))...)
		require.NoError(t, err)
		pid := dev.WorkerPID()
		flag, err := dev.MallocBytes(ctx, 4)
		require.NoError(t, err)
		require.NoError(t, streams.Default(dev).Memset(ctx, flag, 0).Wait(ctx))
		mod, err := dev.Compile(ctx, device.Source{Name: "faults.cu", Code: faultSource, Sim: map[string]cuda.SimKernel{"spin_forever": spinForeverSim}})
		require.NoError(t, err)
		k, err := mod.Kernel(ctx, "spin_forever")
		require.NoError(t, err)
		start := time.Now()
		err = streams.Default(dev).Launch(ctx, k, cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(1)}, flag).Wait(ctx)
		require.ErrorIs(t, err, device.ErrStuck)
		assert.Less(t, time.Since(start), 10*time.Second)
		require.Eventually(t, func() bool { return !testproc.Alive(pid) }, 15*time.Second, 20*time.Millisecond,
			"the stuck device's worker ends")
		require.NoError(t, dev.Close())

		again, err := device.Open(ctx, 0, opts...)
		require.NoError(t, err)
		defer func() { require.NoError(t, again.Close()) }()
		require.NoError(t, saxpyRound(ctx, again, 1<<16), "the GPU after its stuck worker ended")
	})
}
