package device_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/sim"
	"github.com/gpuactor/gpuactor/streams"
)

// A slowed simulated device takes factor times as long for the same work.
func TestSimSlowdown(t *testing.T) {
	ctx := testdev.Ctx(t)
	simu := sim.New(sim.WithSlowdown(1, 4))
	took := func(ordinal int) time.Duration {
		dev, err := device.Open(ctx, ordinal, device.WithSimulator(simu))
		require.NoError(t, err)
		defer dev.Close()
		s, err := streams.New(ctx, dev)
		require.NoError(t, err)
		defer s.Close(ctx)
		start := time.Now()
		require.NoError(t, s.HostFunc(ctx, func() { time.Sleep(10 * time.Millisecond) }).Wait(ctx))
		return time.Since(start)
	}
	// A sleep only ever runs long, so the slow device's bound holds under any load; the fast
	// device's is an upper one, which a loaded host can overshoot once: the best of three.
	fast := min(took(0), took(0), took(0))
	slow := took(1)
	assert.Less(t, fast, 30*time.Millisecond)
	assert.GreaterOrEqual(t, slow, 40*time.Millisecond, "four times the 10 ms")
}
