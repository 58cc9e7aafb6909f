package device_test

import (
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/streams"
)

// TestWaiterQuery: with waiter queries on, stream operations awaited from many goroutines
// complete with their results, and the device stays usable; off (the default), no waiter
// asks the GPU.
func TestWaiterQuery(t *testing.T) {
	prev := runtime.GOMAXPROCS(max(runtime.GOMAXPROCS(0), 4)) // tokens for waiters beside the actor
	t.Cleanup(func() { runtime.GOMAXPROCS(prev) })
	for _, w := range []device.WaiterQuery{device.WaiterQueryOn, device.WaiterQueryOff, device.WaiterQueryDefault} {
		t.Run(w.String(), func(t *testing.T) {
			dev := openDev(t, []device.Option{onSim, device.WithActorTuning(device.ActorTuning{WaiterQuery: w})})
			ctx := testdev.Ctx(t)
			var wg sync.WaitGroup
			for g := range 4 {
				wg.Go(func() {
					s, err := streams.New(ctx, dev)
					if !assert.NoError(t, err) {
						return
					}
					defer s.Close(ctx)
					b := mustMalloc(t, dev, 256)
					defer b.Close(ctx)
					h, err := dev.MallocPinnedBytes(ctx, 256)
					if !assert.NoError(t, err) {
						return
					}
					defer h.Close(ctx)
					for i := range 50 {
						v := byte(g*50 + i)
						assert.NoError(t, s.Memset(ctx, b, v).Wait(ctx))
						assert.NoError(t, s.CopyDeviceToHost(ctx, h, b).Wait(ctx))
						assert.Equal(t, v, h.Host()[255], "the future completed after its work")
					}
				})
			}
			wg.Wait()
			testdev.RequireUsable(t, dev)
			if w != device.WaiterQueryOn {
				assert.Zero(t, dev.Stats().Tracker.WaiterQueries, "off: only the actor asks")
			}
		})
	}
}
