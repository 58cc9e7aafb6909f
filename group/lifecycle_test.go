package group_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/group"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/streams"
	"github.com/gpuactor/gpuactor/supervise"
)

// scaleJob scales 64 floats by 3 on the job's device with the kernel kernel gives for it, and
// checks every element; on records where it ran.
func scaleJob(kernel func(ctx context.Context, d *device.Device) (*device.Kernel, error), on func(*device.Device)) group.Job {
	return func(ctx context.Context, d *device.Device, s *streams.Stream) error {
		on(d)
		k, err := kernel(ctx, d)
		if err != nil {
			return err
		}
		const n = 64
		buf, _, err := alloc.MallocAsync[float32](ctx, s, n)
		if err != nil {
			return err
		}
		defer buf.Close(context.WithoutCancel(ctx))
		xs := make([]float32, n)
		for i := range xs {
			xs[i] = float32(i)
		}
		// A launch refused before it was queued (a kernel of another device) leaves the
		// stream's later work to run: its own future says so.
		err = actor.WaitAll(ctx,
			streams.CopyToDevice(ctx, s, buf, xs),
			s.Launch(ctx, k, cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(n)}, buf, float32(3), int32(n)),
			streams.CopyFromDevice(ctx, s, xs, buf))
		if err != nil {
			return err
		}
		for i, x := range xs {
			if x != float32(3*i) {
				return fmt.Errorf("element %d: got %v, want %v", i, x, 3*i)
			}
		}
		return nil
	}
}

// runScaleJobs runs n scale jobs and returns their errors and where they ran.
func runScaleJobs(t *testing.T, g *group.Group, n int, kernel func(ctx context.Context, d *device.Device) (*device.Kernel, error)) ([]error, map[*device.Device]int) {
	t.Helper()
	ctx := testdev.Ctx(t)
	var mu sync.Mutex
	ran := map[*device.Device]int{}
	on := func(d *device.Device) {
		mu.Lock()
		ran[d]++
		mu.Unlock()
	}
	fs := make([]*actor.Future[struct{}], n)
	for i := range fs {
		fs[i] = g.Submit(ctx, scaleJob(kernel, on))
	}
	errs := make([]error, n)
	for i, f := range fs {
		errs[i] = f.Wait(ctx)
	}
	return errs, ran
}

// The bug of the kernels kept by ordinal: after a restart every job placed on the new device
// failed. Jobs asking a device.Program for their device's kernel all succeed, on the new
// device too; the old pattern still fails there, with an error that says why.
func TestProgramKernelsFollowARestart(t *testing.T) {
	ctx := testdev.Ctx(t)
	r, devs := newReopener(t, 2)
	prog := device.NewProgram(scaleSource)
	defer func() { require.NoError(t, prog.Close(ctx)) }()
	byOrdinal := map[int]*device.Kernel{} // what the package doc used to teach
	for _, d := range devs {
		k, err := prog.Kernel(ctx, d, "scale")
		require.NoError(t, err)
		byOrdinal[d.Ordinal()] = k
	}
	fromProgram := func(ctx context.Context, d *device.Device) (*device.Kernel, error) {
		return prog.Kernel(ctx, d, "scale")
	}
	fromMap := func(_ context.Context, d *device.Device) (*device.Kernel, error) { return byOrdinal[d.Ordinal()], nil }
	g := newGroup(t, devs, group.WithPolicy(group.RoundRobin), group.WithRestart(r.open, fast()...))

	errs, _ := runScaleJobs(t, g, 20, fromProgram)
	for i, err := range errs {
		require.NoError(t, err, "job %d before the restart", i)
	}
	r.failNow(t, devs[1])
	restartedAt(t, g, 1, 1)
	now := g.Devices()[1]

	errs, ran := runScaleJobs(t, g, 40, fromProgram)
	for i, err := range errs {
		require.NoError(t, err, "job %d after the restart", i)
	}
	assert.Equal(t, 20, ran[now], "the new device took its share")

	errs, ran = runScaleJobs(t, g, 40, fromMap)
	failed := 0
	for _, err := range errs {
		if err != nil {
			failed++
			require.ErrorIs(t, err, device.ErrWrongDevice)
			assert.ErrorContains(t, err, "replaced device")
			assert.ErrorContains(t, err, "device.Program")
		}
	}
	assert.Equal(t, ran[now], failed, "a kernel kept by ordinal fails on the device that replaced its own")
	assert.True(t, g.Stats().Devices[1].Healthy, "a job's mistake leaves the device in placement")
}

// The setup hook runs on every device before it takes a job: in New and after each restart.
func TestSetupRunsBeforeJobsOnNewAndEveryRestart(t *testing.T) {
	r, devs := newReopener(t, 2)
	var mu sync.Mutex
	setUp := map[*device.Device]int{}
	var setups, jobsOnDevicesNotSetUp atomic.Int32
	setup := func(ctx context.Context, d *device.Device) error {
		require.NoError(t, ctx.Err())
		setups.Add(1)
		mu.Lock()
		setUp[d]++
		mu.Unlock()
		return nil
	}
	g := newGroup(t, devs, group.WithPolicy(group.RoundRobin), group.WithSetup(setup), group.WithRestart(r.open, fast()...))
	require.EqualValues(t, 2, setups.Load(), "New set up both devices")
	check := func() {
		for range 40 {
			g.Go(context.Background(), hostJob(func(d *device.Device) {
				mu.Lock()
				defer mu.Unlock()
				if setUp[d] != 1 {
					jobsOnDevicesNotSetUp.Add(1)
				}
			}))
		}
		require.NoError(t, g.Wait())
	}
	check()
	r.failNow(t, devs[0])
	restartedAt(t, g, 0, 1)
	check()
	r.failNow(t, g.Devices()[0])
	restartedAt(t, g, 0, 2)
	check()
	assert.EqualValues(t, 4, setups.Load(), "two devices, two restarts")
	assert.Zero(t, jobsOnDevicesNotSetUp.Load())
	mu.Lock()
	defer mu.Unlock()
	for _, d := range g.Devices() {
		assert.Equal(t, 1, setUp[d], "%v set up once", d)
	}
}

var errSetup = errors.New("test: setup failed")

// A setup error fails New, which lets go of what it made: the devices stay the caller's and
// usable. A panic in setup is an error too.
func TestSetupErrorFailsNew(t *testing.T) {
	ctx := testdev.Ctx(t)
	devs := openSims(t, 3)
	before := devs[0].Stats().Memory.DeviceBytes()
	_, err := group.New(ctx, devs, group.WithSetup(func(_ context.Context, d *device.Device) error {
		if d.Ordinal() == 1 {
			return errSetup
		}
		return nil
	}))
	require.ErrorIs(t, err, errSetup)
	require.ErrorContains(t, err, "setting up device 1")

	_, err = group.New(ctx, devs, group.WithSetup(func(_ context.Context, d *device.Device) error {
		if d.Ordinal() == 2 {
			panic("setup panicked")
		}
		return nil
	}))
	var pe *actor.PanicError
	require.ErrorAs(t, err, &pe)
	require.ErrorContains(t, err, "setting up device 2")

	for _, d := range devs {
		testdev.RequireUsable(t, d)
	}
	assert.Equal(t, before, devs[0].Stats().Memory.DeviceBytes())
	g := newGroup(t, devs, group.WithSetup(func(context.Context, *device.Device) error { return nil }))
	require.Len(t, runJobs(t, g, 30), 3, "the same devices make a group")
}

// A setup error on a reopened device is a failed restart: the supervisor tries again, and the
// device setup refused is closed.
func TestSetupErrorIsAFailedRestart(t *testing.T) {
	r, devs := newReopener(t, 2)
	var failNext atomic.Int32
	setup := func(_ context.Context, d *device.Device) error {
		if failNext.Add(-1) >= 0 {
			return errSetup
		}
		return nil
	}
	g := newGroup(t, devs, group.WithSetup(setup), group.WithRestart(r.open, fast(supervise.WithRestarts(3, time.Minute))...))
	failNext.Store(1)
	r.failNow(t, devs[1])
	restartedAt(t, g, 1, 1)
	opened := r.openedDevices()
	require.Len(t, opened, 2, "one refused by setup, one that took its place")
	_, err := opened[0].MallocBytes(context.Background(), 16)
	require.ErrorIs(t, err, device.ErrClosed, "the device setup refused was closed")
	assert.Same(t, opened[1], g.Devices()[1])
	ran := runJobs(t, g, 40)
	assert.Positive(t, ran[opened[1]])
}

// A job running when its device was replaced fails with an error naming both generations.
func TestJobOnAReplacedDeviceNamesBothGenerations(t *testing.T) {
	ctx := testdev.Ctx(t)
	r, devs := newReopener(t, 1)
	g := newGroup(t, devs, group.WithRestart(r.open, fast()...))
	started, release := make(chan struct{}), make(chan struct{})
	f := g.Submit(ctx, func(ctx context.Context, d *device.Device, s *streams.Stream) error {
		close(started)
		<-release
		return s.HostFunc(ctx, func() {}).Wait(ctx)
	})
	<-started
	r.failNow(t, devs[0])
	restartedAt(t, g, 0, 1)
	close(release)
	err := f.Wait(ctx)
	require.ErrorIs(t, err, group.ErrDeviceReplaced)
	require.ErrorIs(t, err, device.ErrDeviceFailed)
	var de *group.DeviceError
	require.ErrorAs(t, err, &de)
	assert.Equal(t, group.DeviceError{Ordinal: 0, Generation: 1, Now: 2, Err: de.Err}, *de)
	assert.ErrorContains(t, err, "device 0 (generation 1) failed under the job and was replaced by generation 2 while it ran")

	// A failure of the second generation names it; no restart has replaced it yet.
	started, release = make(chan struct{}), make(chan struct{})
	now := g.Devices()[0]
	f = g.Submit(ctx, func(ctx context.Context, d *device.Device, s *streams.Stream) error {
		close(started)
		<-release
		return s.HostFunc(ctx, func() {}).Wait(ctx)
	})
	<-started
	r.failNow(t, now)
	close(release)
	err = f.Wait(ctx)
	require.ErrorAs(t, err, &de)
	assert.Equal(t, uint64(2), de.Generation)
	assert.ErrorContains(t, err, "device 0 (generation 2) failed under the job")
	if de.Now == 2 {
		assert.NotErrorIs(t, err, group.ErrDeviceReplaced)
	}
}

// Close closes the devices the group opened and leaves the caller's open; Shutdown closes
// both. A closed device reports closed, not failed.
func TestCloseAndShutdownCloseWhatTheyOwn(t *testing.T) {
	for _, shutdown := range []bool{false, true} {
		t.Run(fmt.Sprint("shutdown=", shutdown), func(t *testing.T) {
			ctx := testdev.Ctx(t)
			r, devs := newReopener(t, 2)
			g, err := group.New(ctx, devs, group.WithRestart(r.open, fast()...))
			require.NoError(t, err)
			r.failNow(t, devs[1])
			restartedAt(t, g, 1, 1)
			opened := g.Devices()[1]
			runJobs(t, g, 20)
			if shutdown {
				require.NoError(t, g.Shutdown(ctx))
			} else {
				require.NoError(t, g.Close(ctx))
			}
			_, err = opened.MallocBytes(ctx, 16)
			require.ErrorIs(t, err, device.ErrClosed, "the device the group opened is closed")
			require.NoError(t, opened.Err(), "closed, not failed")
			_, err = devs[0].MallocBytes(ctx, 16)
			if shutdown {
				require.ErrorIs(t, err, device.ErrClosed, "Shutdown shut the caller's device down")
				require.NoError(t, devs[0].Err(), "closed, not failed")
			} else {
				require.NoError(t, err, "Close leaves the caller's device open")
				testdev.RequireUsable(t, devs[0])
			}
			require.NoError(t, g.Close(ctx), "again")
			require.NoError(t, g.Shutdown(ctx), "and again")
			_, err = devs[0].MallocBytes(ctx, 16)
			require.ErrorIs(t, err, device.ErrClosed, "a later Shutdown shuts the caller's devices down")
		})
	}
}

// Close and Shutdown wait for the running jobs within their context: once it ends they return
// its error, and the group finishes closing when the jobs return.
func TestCloseHonoursItsContext(t *testing.T) {
	for _, shutdown := range []bool{false, true} {
		t.Run(fmt.Sprint("shutdown=", shutdown), func(t *testing.T) {
			ctx := testdev.Ctx(t)
			devs := openSims(t, 2)
			g, err := group.New(ctx, devs, group.WithStreams(1))
			require.NoError(t, err)
			started, release := make(chan struct{}), make(chan struct{})
			running := g.Submit(ctx, func(ctx context.Context, d *device.Device, s *streams.Stream) error {
				close(started)
				<-release
				return nil
			})
			<-started
			queued := make([]*actor.Future[struct{}], 4)
			for i := range queued {
				queued[i] = g.Submit(ctx, hostJob(func(*device.Device) {}))
			}
			short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
			defer cancel()
			if shutdown {
				err = g.Shutdown(short)
			} else {
				err = g.Close(short)
			}
			require.ErrorIs(t, err, context.DeadlineExceeded)
			for _, f := range queued { // failed at once, or ran before Close began
				if err := f.Wait(ctx); err != nil {
					require.ErrorIs(t, err, device.ErrClosed)
				}
			}
			require.ErrorIs(t, g.Submit(ctx, hostJob(func(*device.Device) {})).Wait(ctx), device.ErrClosed)
			close(release)
			require.NoError(t, running.Wait(ctx), "the running job was not cut short")
			require.NoError(t, g.Close(ctx), "the group finishes closing once the job returned")
		})
	}
}

// Without WithRestart a device has no generations to name.
func TestJobOnAFailedDeviceWithoutRestart(t *testing.T) {
	ctx := testdev.Ctx(t)
	r, devs := newReopener(t, 1)
	g := newGroup(t, devs)
	err := g.Submit(ctx, func(ctx context.Context, d *device.Device, s *streams.Stream) error {
		r.failNow(t, d)
		return s.HostFunc(ctx, func() {}).Wait(ctx)
	}).Wait(ctx)
	var de *group.DeviceError
	require.ErrorAs(t, err, &de)
	assert.Equal(t, group.DeviceError{Ordinal: 0, Err: de.Err}, *de)
	require.ErrorIs(t, err, device.ErrDeviceFailed)
	assert.NotErrorIs(t, err, group.ErrDeviceReplaced)
	assert.ErrorContains(t, err, "group: device 0 failed under the job: ")
}
