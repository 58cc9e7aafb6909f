package device_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/streams"
)

var onSim = device.WithBackend(device.BackendSim)

// TestActorTuningNoSpin: a device whose spins are all off never spins, and still tracks GPU
// completion (its idle hook is its own, whatever the tuning).
func TestActorTuningNoSpin(t *testing.T) {
	dev := openDev(t, []device.Option{onSim, device.WithActorTuning(device.ActorTuning{
		Spin: device.NoSpin, BusySpin: device.NoSpin, AwaitSpin: device.NoSpin, IdlePoll: time.Millisecond,
	})})
	ctx := testdev.Ctx(t)
	b := mustMalloc(t, dev, 1<<10)
	for range 20 {
		require.NoError(t, streams.Default(dev).Memset(ctx, b, 1).Wait(ctx), "completion still tracked")
	}
	st := dev.Stats().Actor
	assert.Zero(t, st.Spin, "no spin at all")
	assert.Positive(t, st.Parks)
	require.NoError(t, b.Close(ctx))
}

// TestActorTuningZeroIsDefault: the zero tuning is the device without WithActorTuning.
func TestActorTuningZeroIsDefault(t *testing.T) {
	dev := openDev(t, []device.Option{onSim, device.WithActorTuning(device.ActorTuning{})})
	testdev.RequireUsable(t, dev)
}

// TestActorTuningMailboxOfOne: the smallest mailbox works: senders wait their turn.
func TestActorTuningMailboxOfOne(t *testing.T) {
	dev := openDev(t, []device.Option{onSim, device.WithActorTuning(device.ActorTuning{Mailbox: 1, Batch: 1})})
	testdev.RequireUsable(t, dev)
}

func TestActorTuningOutOfRange(t *testing.T) {
	for name, c := range map[string]struct {
		tuning device.ActorTuning
		want   string
	}{
		"mailbox":      {device.ActorTuning{Mailbox: -1}, "mailbox capacity -1"},
		"batch":        {device.ActorTuning{Batch: -3}, "batch -3"},
		"idle poll":    {device.ActorTuning{IdlePoll: -time.Second}, "idle poll -1s"},
		"spin":         {device.ActorTuning{Spin: -2}, "spin -2ns"},
		"busy spin":    {device.ActorTuning{BusySpin: -time.Millisecond}, "busy spin -1ms"},
		"await spin":   {device.ActorTuning{AwaitSpin: -5 * time.Microsecond}, "await spin -5µs"},
		"waiter query": {device.ActorTuning{WaiterQuery: 7}, "waiter query 7"},
	} {
		t.Run(name, func(t *testing.T) {
			dev, err := device.Open(testdev.Ctx(t), 0, onSim, device.WithActorTuning(c.tuning))
			require.ErrorIs(t, err, actor.ErrBadOption)
			assert.ErrorContains(t, err, c.want)
			assert.Nil(t, dev)
		})
	}
	// The mistake left nothing behind: the next device opens and works.
	testdev.RequireUsable(t, openDev(t, []device.Option{onSim}))
}

// TestActorTuningLastWins: a later WithActorTuning replaces an earlier one whole.
func TestActorTuningLastWins(t *testing.T) {
	dev := openDev(t, []device.Option{onSim,
		device.WithActorTuning(device.ActorTuning{Mailbox: -1}),
		device.WithActorTuning(device.ActorTuning{Batch: 2}),
	})
	testdev.RequireUsable(t, dev)
}
