//go:build linux

package device_test

import (
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/streams"
)

// TestWaiterQueryOnEachBackend: with WaiterQueryOn, launches and copies awaited from several
// goroutines complete after their work. On the GPU, whose round trip is several microseconds,
// spinning waiters that hold a spin token see most completions before the actor does, so some
// futures must have been completed by their waiters; an isolated device's backend offers no
// any-thread query, so none of its waiters ever asks.
func TestWaiterQueryOnEachBackend(t *testing.T) {
	prev := runtime.GOMAXPROCS(max(runtime.GOMAXPROCS(0), 4))
	t.Cleanup(func() { runtime.GOMAXPROCS(prev) })
	check := func(isolated bool) func(t *testing.T, opts []device.Option) {
		return func(t *testing.T, opts []device.Option) {
			ctx := testdev.Ctx(t)
			dev := openDev(t, append(opts, device.WithActorTuning(device.ActorTuning{WaiterQuery: device.WaiterQueryOn})))
			k, err := saxpyModule(t, dev).Kernel(ctx, "empty")
			require.NoError(t, err)
			var wg sync.WaitGroup
			for g := range 4 {
				wg.Go(func() {
					s, err := streams.New(ctx, dev)
					if !assert.NoError(t, err) {
						return
					}
					defer s.Close(ctx)
					b := mustMalloc(t, dev, 4096)
					defer b.Close(ctx)
					h, err := dev.MallocPinnedBytes(ctx, 4096)
					if !assert.NoError(t, err) {
						return
					}
					defer h.Close(ctx)
					for i := range 200 {
						if !assert.NoError(t, s.Launch(ctx, k, cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(32)}).Wait(ctx)) {
							return
						}
						v := byte(g*61 + i)
						assert.NoError(t, s.Memset(ctx, b, v).Wait(ctx))
						assert.NoError(t, s.CopyDeviceToHost(ctx, h, b).Wait(ctx))
						assert.Equal(t, v, h.Host()[4095], "the future completed after its work")
					}
				})
			}
			wg.Wait()
			testdev.RequireUsable(t, dev)
			st := dev.Stats()
			switch {
			case isolated:
				assert.Zero(t, st.Tracker.WaiterQueries, "an isolated device's waiters leave the GPU to its actor")
			case dev.Backend() == device.BackendCUDA:
				assert.Positive(t, st.Tracker.WaiterCompleted, "waiters completed some futures themselves")
			}
			assert.Zero(t, st.InFlight)
		}
	}
	t.Run("in-process", func(t *testing.T) { testdev.Backends(t, check(false)) })
	t.Run("isolated", func(t *testing.T) { isolatedBackends(t, check(true)) })
}
