package device_test

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/sim"
	"github.com/gpuactor/gpuactor/streams"
)

// simDevices opens n devices of one simulated machine, closed with the test.
func simDevices(t *testing.T, n int) []*device.Device {
	t.Helper()
	ctx := testdev.Ctx(t)
	opts := []device.Option{device.WithSimulator(sim.New(sim.WithDevices(n))), device.WithKernelCache(t.TempDir())}
	devs := make([]*device.Device, n)
	for i := range devs {
		d, err := device.Open(ctx, i, opts...)
		require.NoError(t, err)
		t.Cleanup(func() { _ = d.Close() })
		devs[i] = d
	}
	return devs
}

// runSaxpy runs y = 2x + y on d with k and checks the answer.
func runSaxpy(t *testing.T, d *device.Device, k *device.Kernel) {
	t.Helper()
	ctx := testdev.Ctx(t)
	const n = 64
	x, y := mustMalloc(t, d, 4*n), mustMalloc(t, d, 4*n)
	defer x.Close(ctx)
	defer y.Close(ctx)
	xs, ys := make([]float32, n), make([]float32, n)
	for i := range xs {
		xs[i], ys[i] = float32(i), 1
	}
	upload(t, x, xs)
	upload(t, y, ys)
	require.NoError(t, streams.Default(d).Launch(ctx, k, cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(n)}, int32(n), float32(2), x, y).Wait(ctx))
	download(t, ys, y)
	for i, v := range ys {
		require.Equal(t, float32(2*i+1), v, "y[%d]", i)
	}
}

func TestProgramCompilesOnceForEveryDeviceAndCaller(t *testing.T) {
	ctx := testdev.Ctx(t)
	devs := simDevices(t, 3)
	prog := device.NewProgram(device.Source{Name: "saxpy_prog.cu", Code: saxpySource, Sim: saxpySim})
	const callers = 8
	kernels := make([][]*device.Kernel, len(devs))
	var wg sync.WaitGroup
	for i, d := range devs {
		kernels[i] = make([]*device.Kernel, callers)
		for c := range callers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				k, err := prog.Kernel(ctx, d, "saxpy")
				assert.NoError(t, err)
				kernels[i][c] = k
			}()
		}
	}
	wg.Wait()
	require.False(t, t.Failed())
	assert.EqualValues(t, 1, device.ProgramCompilesForTest(prog), "one architecture: one compile")
	for i, d := range devs {
		for c := range callers {
			require.Same(t, kernels[i][0], kernels[i][c], "device %d: one module, one kernel", i)
		}
		if i > 0 {
			require.NotSame(t, kernels[0][0].Module(), kernels[i][0].Module(), "a module per device")
		}
		runSaxpy(t, d, kernels[i][0])
	}
	require.NoError(t, prog.Close(ctx))
}

func TestProgramFollowsAReopenedDevice(t *testing.T) {
	ctx := testdev.Ctx(t)
	opts := []device.Option{device.WithSimulator(sim.New(sim.WithDevices(2))), device.WithKernelCache(t.TempDir())}
	prog := device.NewProgram(device.Source{Name: "saxpy_prog.cu", Code: saxpySource, Sim: saxpySim})
	defer prog.Close(ctx)

	first, err := device.Open(ctx, 1, opts...)
	require.NoError(t, err)
	old, err := prog.Kernel(ctx, first, "saxpy")
	require.NoError(t, err)
	runSaxpy(t, first, old)
	require.NoError(t, first.Close())

	again, err := device.Open(ctx, 1, opts...) // the same GPU, opened anew, as a restart does
	require.NoError(t, err)
	defer again.Close()
	k, err := prog.Kernel(ctx, again, "saxpy")
	require.NoError(t, err)
	require.NotSame(t, old, k, "loaded again on the new device")
	runSaxpy(t, again, k)
	assert.EqualValues(t, 1, device.ProgramCompilesForTest(prog), "the image is kept: no second compile")

	// The old kernel, on the new device: the error says it belongs to another, closed instance.
	err = streams.Default(again).Launch(ctx, old, cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(1)}, int32(0), float32(0), nil, nil).Wait(ctx)
	require.ErrorIs(t, err, device.ErrWrongDevice)
	assert.Contains(t, err.Error(), "closed")
	assert.Contains(t, err.Error(), "device.Program")
	testdev.RequireUsable(t, again)
}

func TestProgramCloseUnloads(t *testing.T) {
	ctx := testdev.Ctx(t)
	devs := simDevices(t, 2)
	prog := device.NewProgram(device.Source{Name: "saxpy_prog.cu", Code: saxpySource, Sim: saxpySim})
	var ks []*device.Kernel
	for _, d := range devs {
		k, err := prog.Kernel(ctx, d, "saxpy")
		require.NoError(t, err)
		ks = append(ks, k)
	}
	require.NoError(t, prog.Close(ctx))
	require.NoError(t, prog.Close(ctx), "twice is harmless")
	for i, k := range ks {
		err := k.Module().Close(ctx)
		require.ErrorIs(t, err, device.ErrClosed, "device %d: the module was unloaded", i)
		_, err = k.Module().Kernel(ctx, "empty")
		require.ErrorIs(t, err, device.ErrClosed)
		testdev.RequireUsable(t, devs[i])
	}
	_, err := prog.Kernel(ctx, devs[0], "saxpy")
	require.ErrorIs(t, err, device.ErrClosed)
}

func TestProgramCloseSkipsClosedDevices(t *testing.T) {
	ctx := testdev.Ctx(t)
	devs := simDevices(t, 2)
	prog := device.NewProgram(device.Source{Name: "saxpy_prog.cu", Code: saxpySource, Sim: saxpySim})
	for _, d := range devs {
		_, err := prog.Kernel(ctx, d, "saxpy")
		require.NoError(t, err)
	}
	require.NoError(t, devs[0].Close())
	require.NoError(t, prog.Close(ctx), "a closed device released its module itself")
}

func TestProgramBadInput(t *testing.T) {
	ctx := testdev.Ctx(t)
	dev := simDevices(t, 1)[0]

	_, err := device.NewProgram(device.Source{Name: "blank.cu", Code: "  "}).Kernel(ctx, dev, "k")
	require.ErrorIs(t, err, device.ErrInvalidArgument)
	assert.Contains(t, err.Error(), "blank.cu")

	prog := device.NewProgram(device.Source{Name: "saxpy_prog.cu", Code: saxpySource, Sim: saxpySim})
	defer prog.Close(ctx)
	_, err = prog.Kernel(ctx, nil, "saxpy")
	require.ErrorIs(t, err, device.ErrInvalidArgument)
	_, err = prog.Kernel(ctx, dev, "no_such_kernel")
	require.ErrorIs(t, err, device.ErrNoKernel)
	var nilProg *device.Program
	_, err = nilProg.Kernel(ctx, dev, "saxpy")
	require.ErrorIs(t, err, device.ErrInvalidArgument)

	_, err = device.LoadProgram("odd", []byte("x"), device.ImageKind(9), nil).Kernel(ctx, dev, "k")
	require.ErrorIs(t, err, device.ErrInvalidArgument)
	assert.Contains(t, err.Error(), "unknown kind")

	k, err := prog.Kernel(ctx, dev, "saxpy") // the device and the program go on after the mistakes
	require.NoError(t, err)
	runSaxpy(t, dev, k)
}

func TestLoadProgramLoadsOnEachDevice(t *testing.T) {
	ctx := testdev.Ctx(t)
	devs := simDevices(t, 2)
	// The simulator runs the Go kernels: an image of no bytes loads there, as LoadModule's does.
	prog := device.LoadProgram("saxpy.ptx", nil, device.PTX, saxpySim)
	defer prog.Close(ctx)
	for _, d := range devs {
		k, err := prog.Kernel(ctx, d, "saxpy")
		require.NoError(t, err)
		assert.Equal(t, "saxpy.ptx", k.Module().Name())
		runSaxpy(t, d, k)
	}
}

// Close racing first loads: every module a caller got is unloaded once Close and the loads
// are done, and a load that finished after Close unloads itself.
func TestProgramCloseDuringLoads(t *testing.T) {
	ctx := testdev.Ctx(t)
	devs := simDevices(t, 4)
	prog := device.NewProgram(device.Source{Name: "saxpy_prog.cu", Code: saxpySource, Sim: saxpySim})
	var mu sync.Mutex
	var got []*device.Kernel
	var wg sync.WaitGroup
	start := make(chan struct{})
	for _, d := range devs {
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				k, err := prog.Kernel(ctx, d, "saxpy")
				if err != nil {
					assert.ErrorIs(t, err, device.ErrClosed)
					return
				}
				mu.Lock()
				got = append(got, k)
				mu.Unlock()
			}()
		}
	}
	close(start)
	require.NoError(t, prog.Close(ctx))
	wg.Wait()
	for _, k := range got {
		_, err := k.Module().Kernel(ctx, "empty")
		require.ErrorIs(t, err, device.ErrClosed, "a module of %s outlived the program's Close", k.Module().Name())
	}
	for _, d := range devs {
		testdev.RequireUsable(t, d)
	}
}
