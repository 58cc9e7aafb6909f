package group_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/group"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/streams"
)

// Jobs that each allocate, upload, add on the GPU and read back, over every device of the
// machine (testdev.SimDevices on the simulator; every GPU on the cuda backend): each result is
// checked, every device takes work, and no device memory is left behind.
func TestJobsOverEveryDevice(t *testing.T) {
	testdev.Backends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		devs, prog := openEveryDevice(t, opts)
		t.Logf("%d devices", len(devs))
		g, err := group.New(ctx, devs)
		require.NoError(t, err)
		const jobs, n = 400, 4096
		per := make([]atomic.Int64, len(devs))
		for i := range jobs {
			g.Go(ctx, func(ctx context.Context, d *device.Device, s *streams.Stream) error {
				buf, _, err := alloc.MallocAsync[uint32](ctx, s, n)
				if err != nil {
					return err
				}
				defer buf.Close(ctx)
				xs := make([]uint32, n)
				for k := range xs {
					xs[k] = uint32(i*n + k)
				}
				streams.CopyToDevice(ctx, s, buf, xs)
				k, err := prog.Kernel(ctx, d, "add_u32")
				if err != nil {
					return err
				}
				s.Launch(ctx, k, cuda.LaunchConfig{Grid: cuda.Dim(n / 256), Block: cuda.Dim(256)}, buf, uint32(i), int32(n))
				if err := streams.CopyFromDevice(ctx, s, xs, buf).Wait(ctx); err != nil {
					return err
				}
				for k, x := range xs {
					if want := uint32(i*n+k) + uint32(i); x != want {
						t.Errorf("job %d on device %d: word %d is %d, want %d", i, d.Ordinal(), k, x, want)
						break
					}
				}
				per[d.Ordinal()].Add(1)
				return nil
			})
		}
		require.NoError(t, g.Wait())
		require.NoError(t, g.Close(context.Background()))
		var total int64
		for i := range per {
			t.Logf("device %d ran %d jobs", i, per[i].Load())
			assert.Positive(t, per[i].Load(), "device %d took no work", i)
			total += per[i].Load()
		}
		assert.Equal(t, int64(jobs), total)
		for _, d := range devs {
			assert.NoError(t, d.Synchronize(ctx))
			assert.Zero(t, d.Stats().Memory.DeviceBytes(), "device %d", d.Ordinal())
		}
	})
}

// openEveryDevice opens every device of the backend opts name (closed when the test ends) and
// the add kernel's program, which loads on whichever device a job runs on.
func openEveryDevice(t *testing.T, opts []device.Option) ([]*device.Device, *device.Program) {
	t.Helper()
	ctx := testdev.Ctx(t)
	devs, err := device.OpenAll(ctx, opts...)
	require.NoError(t, err)
	prog := device.NewProgram(device.Source{Name: "add.cu", Code: testdev.AddU32,
		Sim: map[string]cuda.SimKernel{"add_u32": testdev.AddU32Sim}})
	t.Cleanup(func() {
		require.NoError(t, prog.Close(context.Background()))
		for _, d := range devs {
			require.NoError(t, d.Close())
		}
	})
	return devs, prog
}
