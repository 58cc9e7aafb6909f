package group_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/group"
	"github.com/gpuactor/gpuactor/internal/testleak"
	"github.com/gpuactor/gpuactor/sim"
	"github.com/gpuactor/gpuactor/streams"
)

// A thousand jobs over four simulated devices with injected faults: one device fails with a
// sticky fault, one is lost, one fails some allocations, one runs some operations slowly.
// Every job completes, or fails with the device's failure or its allocation's; jobs of one key
// stay on one device until it fails; nothing is left behind once the group and the devices
// close.
func TestAThousandJobsWithInjectedFaults(t *testing.T) {
	const jobs = 1000
	ctx := context.Background()
	goroutines := testleak.Base()
	machine := sim.New(sim.WithDevices(4), sim.WithConfinedFaults(), // each device fails alone, as isolated ones do
		sim.WithFaults(0, sim.FaultPlan{StickyAt: 150}),
		sim.WithFaults(1, sim.FaultPlan{LostAt: 250}),
		sim.WithFaults(2, sim.FaultPlan{AllocFailRate: 0.02, Seed: 3}),
		sim.WithFaults(3, sim.FaultPlan{SlowRate: 0.05, SlowBy: time.Millisecond, Seed: 4}))
	devs, err := device.OpenAll(ctx, device.WithSimulator(machine), device.WithKernelCache(""),
		device.WithActorTuning(device.ActorTuning{Spin: device.NoSpin, BusySpin: device.NoSpin, AwaitSpin: device.NoSpin}))
	require.NoError(t, err)
	g, err := group.New(ctx, devs, group.WithPolicy(group.Affinity))
	require.NoError(t, err)

	type run struct {
		key string
		on  int
		err error
	}
	var mu sync.Mutex
	var runs []run
	futures := make([]*actor.Future[struct{}], jobs)
	for i := range jobs {
		key := fmt.Sprint("k", i%64)
		futures[i] = g.Submit(ctx, func(ctx context.Context, d *device.Device, s *streams.Stream) error {
			err := func() error {
				buf, _, err := alloc.MallocAsync[uint32](ctx, s, 1024)
				if err != nil {
					return err
				}
				xs := make([]uint32, 1024)
				for k := range xs {
					xs[k] = uint32(i + k)
				}
				streams.CopyToDevice(ctx, s, buf, xs)
				s.HostFunc(ctx, func() {})
				got := make([]uint32, 1024)
				err = streams.CopyFromDevice(ctx, s, got, buf).Wait(ctx)
				buf.CloseOn(ctx, s)
				if err == nil && got[1023] != uint32(i+1023) {
					return errors.New("wrong data")
				}
				return err
			}()
			mu.Lock()
			runs = append(runs, run{key, d.Ordinal(), err})
			mu.Unlock()
			return err
		}, group.Key(key))
	}
	var done, failed, allocFailed int
	for i, f := range futures {
		err := f.Wait(ctx)
		switch {
		case err == nil:
			done++
		case errors.Is(err, cudaerr.MemoryAllocation):
			allocFailed++
		default:
			require.ErrorIs(t, err, device.ErrDeviceFailed, "job %d", i)
			failed++
		}
	}
	t.Logf("%d done, %d failed with their device, %d with an injected allocation failure", done, failed, allocFailed)
	require.Error(t, devs[0].Err())
	require.Error(t, devs[1].Err())
	require.ErrorIs(t, devs[1].Err(), cudaerr.DevicesUnavailable)
	require.NoError(t, devs[2].Err())
	require.NoError(t, devs[3].Err())
	assert.Positive(t, done)
	assert.Positive(t, failed)

	// Affinity: a key's jobs ran on one device, and moved only once it had failed.
	where := map[string][]int{}
	for _, r := range runs {
		if on := where[r.key]; len(on) == 0 || on[len(on)-1] != r.on {
			where[r.key] = append(on, r.on)
		}
	}
	for key, on := range where {
		for _, d := range on[:len(on)-1] {
			assert.Error(t, devs[d].Err(), "key %s left device %d while it was healthy (ran on %v)", key, d, on)
		}
	}

	require.NoError(t, g.Close(context.Background()))
	for _, d := range devs {
		require.NoError(t, d.Close())
		u := d.Stats().Memory
		assert.Zero(t, u.DeviceBytes()+u.Pinned.Bytes, "device %d: %+v", d.Ordinal(), u)
	}
	testleak.Settle(t, goroutines)
}
