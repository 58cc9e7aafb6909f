package group_test

import (
	"context"
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

// Pipe over every device of the machine, in input order: each item is uploaded, added to on
// the GPU and read back; every result is checked and comes in its place, every device takes
// work, and no device memory is left behind.
func TestPipeOverEveryDevice(t *testing.T) {
	testdev.Backends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		devs, prog := openEveryDevice(t, opts)
		g, err := group.New(ctx, devs)
		require.NoError(t, err)
		t.Cleanup(func() { _ = g.Close(context.Background()) }) // on a failure; before the devices close
		const items, n = 400, 4096
		in := make(chan int)
		go func() {
			defer close(in)
			for i := range items {
				in <- i
			}
		}()
		type answer struct {
			xs     []uint32
			device int
		}
		add := func(ctx context.Context, d *device.Device, s *streams.Stream, i int) (answer, error) {
			buf, _, err := alloc.MallocAsync[uint32](ctx, s, n)
			if err != nil {
				return answer{}, err
			}
			defer buf.Close(ctx)
			xs := make([]uint32, n)
			for k := range xs {
				xs[k] = uint32(i*n + k)
			}
			streams.CopyToDevice(ctx, s, buf, xs)
			k, err := prog.Kernel(ctx, d, "add_u32")
			if err != nil {
				return answer{}, err
			}
			s.Launch(ctx, k, cuda.LaunchConfig{Grid: cuda.Dim(n / 256), Block: cuda.Dim(256)}, buf, uint32(i), int32(n))
			return answer{xs, d.Ordinal()}, streams.CopyFromDevice(ctx, s, xs, buf).Wait(ctx)
		}
		per := make([]int, len(devs))
		next := 0
		for r := range group.Pipe(ctx, g, in, add, group.Ordered()) {
			require.NoError(t, r.Err, "item %d", r.Item)
			require.Equal(t, next, r.Index, "in input order")
			require.Equal(t, r.Index, r.Item)
			next++
			for k, x := range r.Value.xs {
				if want := uint32(r.Item*n+k) + uint32(r.Item); x != want {
					t.Fatalf("item %d on device %d: word %d is %d, want %d", r.Item, r.Value.device, k, x, want)
				}
			}
			per[r.Value.device]++
		}
		require.Equal(t, items, next)
		require.NoError(t, g.Close(context.Background()))
		for i, k := range per {
			t.Logf("device %d ran %d items", i, k)
			assert.Positive(t, k, "device %d took no work", i)
		}
		for _, d := range devs {
			assert.NoError(t, d.Synchronize(ctx))
			assert.Zero(t, d.Stats().Memory.DeviceBytes(), "device %d", d.Ordinal())
		}
	})
}
