package device_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/streams"
)

// Nothing a caller does holds up the device: while goroutine A waits in a synchronous call
// whose work cannot finish (the device's own stream is held by a host function), goroutine B
// launches on a stream of its own and waits for the kernel, and gets it; A returns once the
// stream is let go.
func TestSynchronousCallsDoNotHoldUpTheDevice(t *testing.T) {
	testdev.Backends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		dev := openDev(t, opts)
		k, err := saxpyModule(t, dev).Kernel(ctx, "empty")
		require.NoError(t, err)
		b, err := streams.New(ctx, dev)
		require.NoError(t, err)
		defer b.Close(ctx)
		own := streams.Default(dev)
		calls := map[string]func() error{
			"copy in": func() error {
				buf := mustMalloc(t, dev, 1<<20)
				return streams.CopyToDevice(ctx, own, buf, make([]byte, 1<<20)).Wait(ctx)
			},
			"copy out": func() error {
				buf := mustMalloc(t, dev, 1<<20)
				return streams.CopyFromDevice(ctx, own, make([]byte, 1<<20), buf).Wait(ctx)
			},
			"buffer Close": func() error { return mustMalloc(t, dev, 64).Close(ctx) },
			"host buffer Close": func() error {
				h, err := dev.MallocPinnedBytes(ctx, 64)
				require.NoError(t, err)
				return h.Close(ctx)
			},
			"device Synchronize": func() error { return dev.Synchronize(ctx) },
		}
		for name, call := range calls {
			t.Run(name, func(t *testing.T) {
				gate := make(chan struct{})
				held := own.HostFunc(ctx, func() { <-gate })
				returned := make(chan error, 1)
				go func() { returned <- call() }()
				launched := b.Launch(ctx, k, cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(1)})
				require.NoError(t, launched.Wait(ctx), "B's launch and wait got through")
				select {
				case err := <-returned:
					t.Fatalf("A's call returned (%v) while its work was held", err)
				default:
				}
				assert.False(t, held.Ready())
				close(gate)
				select {
				case err := <-returned:
					require.NoError(t, err)
				case <-time.After(time.Minute):
					t.Fatal("A's call never returned")
				}
			})
		}
	})
}

// On the GPU, a long copy of a Go slice on one stream does not hold up a launch on another:
// the launch completes first.
func TestLongCopyDoesNotHoldUpALaunch(t *testing.T) {
	testdev.Backends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		dev := openDev(t, opts)
		if dev.Backend() == device.BackendSim {
			t.Skip("the simulator's copies run on the test's own CPUs: only a GPU's copy is long beside a launch")
		}
		k, err := saxpyModule(t, dev).Kernel(ctx, "empty")
		require.NoError(t, err)
		b, err := streams.New(ctx, dev)
		require.NoError(t, err)
		defer b.Close(ctx)
		const n = 256 << 20
		buf := mustMalloc(t, dev, n)
		src := make([]byte, n)
		for i := 0; i < n; i += 4096 {
			src[i] = byte(i)
		}
		require.NoError(t, b.Launch(ctx, k, cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(1)}).Wait(ctx)) // warm
		for range 3 {
			copied := make(chan struct{})
			go func() {
				defer close(copied)
				assert.NoError(t, streams.CopyToDevice(ctx, streams.Default(dev), buf, src).Wait(ctx))
			}()
			time.Sleep(time.Millisecond) // the copy under way
			require.NoError(t, b.Launch(ctx, k, cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(1)}).Wait(ctx))
			select {
			case <-copied:
				t.Fatal("the 256 MiB copy finished before a launch queued after it began")
			default:
			}
			<-copied
		}
	})
}
