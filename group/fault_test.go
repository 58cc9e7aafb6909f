package group_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/group"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/internal/testleak"
	"github.com/gpuactor/gpuactor/sim"
	"github.com/gpuactor/gpuactor/streams"
)

// oobKernel compiles, on d, a kernel that writes one past the end of its buffer: on the
// simulator it fails the device for good, as a fault does on a GPU.
func oobKernel(t *testing.T, d *device.Device) (*device.Kernel, *device.Buffer) {
	t.Helper()
	ctx := context.Background()
	k := testdev.OOBKernel(t, ctx, d)
	buf, err := d.MallocBytes(ctx, 16)
	require.NoError(t, err)
	return k, buf
}

// Ten thousand jobs over eight devices, one of which faults a third of the way through: every
// job succeeds exactly once, or fails with an error that names the failed device; the
// idempotent ones all succeed, run again elsewhere when the device failed under them.
func TestTenThousandJobsWithADeviceFailingMidway(t *testing.T) {
	const jobs, bad = 10000, 3
	ctx := context.Background()
	devs := openSims(t, 8)
	goroutines := testleak.Base()
	oob, oobBuf := oobKernel(t, devs[bad])
	g, err := group.New(ctx, devs, group.WithQueue(256))
	require.NoError(t, err)

	var started, faults atomic.Int64
	succeeded := make([]atomic.Int32, jobs)
	futures := make([]*actor.Future[struct{}], jobs)
	for i := range jobs {
		var opts []group.JobOption
		if i%2 == 0 {
			opts = append(opts, group.Idempotent())
		}
		futures[i] = g.Submit(ctx, func(ctx context.Context, d *device.Device, s *streams.Stream) error {
			// The fault comes from a job that is not idempotent, so that it fails: an
			// idempotent one would run again elsewhere, and succeed there.
			if started.Add(1) > jobs/3 && i%2 == 1 && d.Ordinal() == bad && faults.Add(1) == 1 {
				return s.Launch(ctx, oob, cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(1)}, oobBuf, int32(4)).Wait(ctx)
			}
			if err := s.HostFunc(ctx, func() {}).Wait(ctx); err != nil {
				return err
			}
			succeeded[i].Add(1)
			return nil
		}, opts...)
	}

	var ok, failed int
	for i, f := range futures {
		err := f.Wait(ctx)
		n := succeeded[i].Load()
		if err == nil {
			ok++
			require.Equal(t, int32(1), n, "job %d succeeded %d times", i, n)
			continue
		}
		failed++
		require.Zero(t, n, "job %d failed after it succeeded: %v", i, err)
		require.ErrorIs(t, err, device.ErrDeviceFailed, "job %d", i)
		require.ErrorContains(t, err, fmt.Sprintf("device %d", bad), "job %d", i)
		require.NotZero(t, i%2, "idempotent job %d failed: %v", i, err)
	}
	t.Logf("%d jobs succeeded, %d failed with device %d", ok, failed, bad)
	require.Positive(t, failed, "the faulting job fails")
	require.Error(t, devs[bad].Err())

	st := g.Stats()
	assert.Zero(t, st.Waiting)
	for i, d := range st.Devices {
		assert.Equal(t, i != bad, d.Healthy, "device %d", i)
		assert.Zero(t, d.Queued, "device %d", i)
		assert.Zero(t, d.Running, "device %d", i)
		if i != bad {
			assert.Positive(t, d.Done, "device %d took work after the fault", i)
		}
	}
	var done, fails, retries uint64
	for _, d := range st.Devices {
		done, fails, retries = done+d.Done, fails+d.Failed, retries+d.Retries
	}
	assert.Equal(t, uint64(ok), done)
	assert.Equal(t, uint64(failed), fails, "each job counted once, where it ended")
	assert.Equal(t, retries, st.Devices[bad].Retries, "only the failed device ended runs that ran again")

	require.NoError(t, g.Close(context.Background()), "a failed device's streams are let go")
	testleak.Settle(t, goroutines)
}

// A device fails under two running jobs: the idempotent one runs again on the other device,
// the other fails naming the device; jobs queued for the failed device move.
func TestDeviceFailingUnderRunningJobs(t *testing.T) {
	ctx := context.Background()
	devs := openSims(t, 2)
	oob, oobBuf := oobKernel(t, devs[0])
	// Memory placement with more room on device 0 puts the first jobs there.
	g := newGroup(t, devs, group.WithPolicy(group.Memory), group.WithStreams(3),
		group.WithMemory(0, 1000), group.WithMemory(1, 500))
	killed := make(chan struct{})
	started := make(chan int, 8)
	ranOn := make([]atomic.Int32, 2)
	victim := func(ctx context.Context, d *device.Device, s *streams.Stream) error {
		started <- d.Ordinal()
		if d.Ordinal() == 0 {
			<-killed
		}
		if err := s.HostFunc(ctx, func() {}).Wait(ctx); err != nil {
			return err
		}
		ranOn[d.Ordinal()].Add(1)
		return nil
	}
	rerun := g.Submit(ctx, victim, group.Bytes(100), group.Idempotent())
	failing := g.Submit(ctx, victim, group.Bytes(100))
	require.Equal(t, 0, <-started)
	require.Equal(t, 0, <-started)
	killer := g.Submit(ctx, func(ctx context.Context, d *device.Device, s *streams.Stream) error {
		defer close(killed)
		return s.Launch(ctx, oob, cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(1)}, oobBuf, int32(4)).Wait(ctx)
	}, group.Bytes(100))
	require.ErrorIs(t, killer.Wait(ctx), device.ErrDeviceFailed)
	require.NoError(t, rerun.Wait(ctx), "the idempotent job ran again on device 1")
	assert.Equal(t, 1, <-started)
	err := failing.Wait(ctx)
	require.ErrorIs(t, err, device.ErrDeviceFailed)
	require.ErrorContains(t, err, "device 0")
	assert.Equal(t, [2]int32{0, 1}, [2]int32{ranOn[0].Load(), ranOn[1].Load()})

	// Device 0 is out of placement: what comes next runs on device 1, though it has less room.
	require.NoError(t, g.Submit(ctx, victim, group.Bytes(100)).Wait(ctx))
	assert.Equal(t, 1, <-started)
	st := g.Stats().Devices
	assert.False(t, st[0].Healthy)
	assert.True(t, st[1].Healthy)
	assert.Equal(t, uint64(2), st[1].Done)
	assert.Equal(t, uint64(2), st[0].Failed, "the killer and the failing job")
	assert.Equal(t, uint64(1), st[0].Retries, "the rerun's first try")
	assert.Zero(t, st[1].Failed+st[1].Retries)
	assert.Equal(t, uint64(4), st[0].Done+st[0].Failed+st[1].Done+st[1].Failed, "four jobs, each counted once")
	require.ErrorIs(t, g.Submit(ctx, victim, group.Bytes(600)).Wait(ctx), group.ErrTooBig,
		"only the failed device had room for 600 bytes")
}

// A kernel fault on one of eight in-process devices (whichever runs the first job past a
// quarter of them) fails all eight, as a sticky fault fails every GPU of a process: every job then ends, succeeded exactly once or failed with the
// device's failure or ErrNoDevice, none waits for good, and a job submitted afterwards fails
// at once with ErrNoDevice; under each policy, whether jobs wait in the shared queue or in a
// device's own.
func TestEveryDeviceFailingTogether(t *testing.T) {
	for _, policy := range []group.Policy{group.LeastOutstanding, group.RoundRobin, group.Affinity} {
		t.Run(policy.String(), func(t *testing.T) { everyDeviceFailingTogether(t, policy) })
	}
}

func everyDeviceFailingTogether(t *testing.T, policy group.Policy) {
	const jobs = 2000
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	devs, err := device.OpenAll(ctx, device.WithSimulator(sim.New(sim.WithDevices(8))), device.WithKernelCache(""),
		device.WithActorTuning(device.ActorTuning{Spin: device.NoSpin, BusySpin: device.NoSpin, AwaitSpin: device.NoSpin}))
	require.NoError(t, err)
	t.Cleanup(func() {
		for _, d := range devs {
			_ = d.Close()
		}
	})
	goroutines := testleak.Base()
	// Every device can fault: under Affinity, which devices the keys reach depends on the
	// hash's seed.
	oob, oobBuf := make([]*device.Kernel, len(devs)), make([]*device.Buffer, len(devs))
	for i, d := range devs {
		oob[i], oobBuf[i] = oobKernel(t, d)
	}
	g, err := group.New(ctx, devs, group.WithQueue(256), group.WithPolicy(policy))
	require.NoError(t, err)

	var started, faults atomic.Int64
	succeeded := make([]atomic.Int32, jobs)
	futures := make([]*actor.Future[struct{}], jobs)
	for i := range jobs {
		futures[i] = g.Submit(ctx, func(ctx context.Context, d *device.Device, s *streams.Stream) error {
			if started.Add(1) > jobs/4 && faults.Add(1) == 1 {
				o := d.Ordinal()
				return s.Launch(ctx, oob[o], cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(1)}, oobBuf[o], int32(4)).Wait(ctx)
			}
			if err := s.HostFunc(ctx, func() {}).Wait(ctx); err != nil {
				return err
			}
			succeeded[i].Add(1)
			return nil
		}, group.Key(strconv.Itoa(i%16)))
	}
	var ok, failed, none int
	for i, f := range futures {
		err := f.Wait(ctx)
		require.NotErrorIs(t, err, context.DeadlineExceeded, "job %d never ended", i)
		n := succeeded[i].Load()
		switch {
		case err == nil:
			ok++
			require.Equal(t, int32(1), n, "job %d", i)
		case errors.Is(err, group.ErrNoDevice):
			none++
			require.Zero(t, n, "job %d", i)
		default:
			failed++
			require.Zero(t, n, "job %d failed after it succeeded: %v", i, err)
			require.ErrorIs(t, err, device.ErrDeviceFailed, "job %d", i)
		}
	}
	t.Logf("%d jobs succeeded, %d failed with their device, %d found no device left", ok, failed, none)
	require.Positive(t, failed, "the faulting job fails")
	for _, d := range devs {
		require.ErrorIs(t, d.Err(), device.ErrDeviceFailed, "device %d, after one device's fault", d.Ordinal())
	}
	require.ErrorIs(t, g.Submit(ctx, func(context.Context, *device.Device, *streams.Stream) error { return nil }).Wait(ctx), group.ErrNoDevice)
	require.NoError(t, g.Close(context.Background()))
	testleak.Settle(t, goroutines)
}
