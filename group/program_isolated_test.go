package group_test

import (
	"context"
	"fmt"
	"io"
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
	"github.com/gpuactor/gpuactor/isolate"
	"github.com/gpuactor/gpuactor/sim"
	"github.com/gpuactor/gpuactor/streams"
	"github.com/gpuactor/gpuactor/supervise"
)

// The service of the issue, on isolated simulated devices: a group with a setup hook that
// loads a device.Program, restarts, and Shutdown. After a worker is killed its device comes
// back, set up, and every job placed there succeeds; after Shutdown every device the group
// held is closed.
func TestProgramOverIsolatedDevicesWithAWorkerKilled(t *testing.T) {
	ctx := testdev.Ctx(t)
	opts := []device.Option{device.WithSimulator(sim.New(sim.WithDevices(2))), device.WithKernelCache(t.TempDir()),
		device.Isolated(isolate.WithStderr(io.Discard))}
	devs, err := device.OpenAll(ctx, opts...)
	require.NoError(t, err)
	defer func() {
		for _, d := range devs {
			_ = d.Close()
		}
	}()
	prog := device.NewProgram(device.Source{Name: "add.cu", Code: testdev.AddU32, Sim: isolatedKernels})
	defer func() { require.NoError(t, prog.Close(ctx)) }()
	var setups atomic.Int32
	g, err := group.New(ctx, devs, group.WithPolicy(group.RoundRobin),
		group.WithSetup(func(ctx context.Context, d *device.Device) error {
			setups.Add(1)
			_, err := prog.Kernel(ctx, d, "add_u32")
			return err
		}),
		group.WithRestart(func(ctx context.Context, failed *device.Device) (*device.Device, error) {
			return device.Open(ctx, failed.Ordinal(), opts...)
		}, supervise.WithRestarts(5, time.Minute), supervise.WithBackoff(time.Millisecond)))
	require.NoError(t, err)

	job := func(seed uint32) group.Job {
		return func(ctx context.Context, d *device.Device, s *streams.Stream) error {
			k, err := prog.Kernel(ctx, d, "add_u32")
			if err != nil {
				return err
			}
			const n = 256
			buf, err := d.MallocBytes(ctx, 4*n)
			if err != nil {
				return err
			}
			defer buf.Close(context.WithoutCancel(ctx))
			xs := make([]uint32, n)
			for i := range xs {
				xs[i] = seed + uint32(i)
			}
			err = actor.WaitAll(ctx,
				streams.CopyToDevice(ctx, s, buf, xs),
				s.Launch(ctx, k, cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(n)}, buf, uint32(5), int32(n)),
				streams.CopyFromDevice(ctx, s, xs, buf))
			if err != nil {
				return err
			}
			for i, x := range xs {
				if x != seed+uint32(i)+5 {
					return fmt.Errorf("WRONG RESULT: word %d is %d", i, x)
				}
			}
			return nil
		}
	}
	runAll := func(n int) {
		t.Helper()
		for i := range n {
			g.Go(ctx, job(uint32(i)))
		}
		require.NoError(t, g.Wait())
	}
	runAll(20)
	require.NoError(t, kill(devs[1].WorkerPID()))
	require.Eventually(t, func() bool {
		st := g.Stats().Devices[1]
		return st.Restarts == 1 && st.Healthy
	}, 10*time.Second, time.Millisecond, "the killed worker's device is back")
	replacement := g.Devices()[1]
	require.NotSame(t, devs[1], replacement)
	assert.EqualValues(t, 3, setups.Load(), "two devices in New, one restart")
	runAll(40)
	assert.Positive(t, g.Stats().Devices[1].Done)

	require.NoError(t, g.Shutdown(ctx))
	for _, d := range []*device.Device{devs[0], replacement} {
		_, err := d.MallocBytes(ctx, 16)
		require.ErrorIs(t, err, device.ErrClosed, "%v", d)
		// Device.Err of an isolated device closed with its worker is health's to settle
		// (closed, not failed); the simulated in-process devices are checked in
		// TestCloseAndShutdownCloseWhatTheyOwn.
	}
}
