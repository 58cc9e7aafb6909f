package streams_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/streams"
)

func nothing(backend.Device, *device.Tracker, backend.Stream) error { return nil }

// EnqueueThen's then decides the future's result, and a panic in it becomes that future's
// error without stalling the stream's later futures or the device's Close.
func TestEnqueueThen(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.stream(t)
		replaced := errors.New("replaced")
		_, err := streams.EnqueueThen(f.ctx, s, nothing, func(err error) error {
			require.NoError(t, err)
			return replaced
		}).Await(f.ctx)
		assert.ErrorIs(t, err, replaced)

		_, err = streams.EnqueueThen(f.ctx, s, nothing, func(error) error { panic("then") }).Await(f.ctx)
		var pe *actor.PanicError
		require.ErrorAs(t, err, &pe)
		assert.Equal(t, "then", pe.Value)

		_, err = streams.Enqueue(f.ctx, s, nothing).Await(f.ctx)
		require.NoError(t, err, "the stream's later work completes")

		_, err = streams.EnqueueThen(f.ctx, s, nothing, nil).Await(f.ctx)
		assert.ErrorIs(t, err, device.ErrInvalidArgument)
	})
}

// A stream operation's message part is used once: submitting it again is refused and leaves
// the first submission alone.
func TestSubmitRefusesAReusedOp(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.stream(t)
		o := &countedOp{}
		_, err := streams.Submit(f.ctx, s, &o.Op, o).Await(f.ctx)
		require.NoError(t, err)
		_, err = streams.Submit(context.Background(), s, &o.Op, o).Await(f.ctx)
		assert.ErrorIs(t, err, actor.ErrFutureReused)
		assert.Equal(t, 1, o.runs)
	})
}

type countedOp struct {
	streams.Op
	runs int
}

func (o *countedOp) EnqueueOn(backend.Device, *device.Tracker, backend.Stream) error {
	o.runs++
	return nil
}

// SubmitQueued's future completes once the op is queued, while the GPU has yet to reach it;
// the stream's next tracked operation completes only after it. A reused op is refused.
func TestSubmitQueuedCompletesOnceQueued(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.stream(t)
		gate := make(chan struct{})
		held := s.HostFunc(f.ctx, func() { <-gate })
		o := &countedOp{}
		_, err := streams.SubmitQueued(f.ctx, s, &o.Op, o).Await(f.ctx)
		require.NoError(t, err)
		assert.Equal(t, 1, o.runs)
		assert.False(t, held.Ready(), "the stream is still held")
		after := streams.Enqueue(f.ctx, s, nothing)
		close(gate)
		_, err = after.Await(f.ctx)
		require.NoError(t, err)
		assert.True(t, held.Ready())

		_, err = streams.SubmitQueued(f.ctx, s, &o.Op, o).Await(f.ctx)
		assert.ErrorIs(t, err, actor.ErrFutureReused)
		_, err = streams.Submit(f.ctx, s, &o.Op, o).Await(f.ctx)
		assert.ErrorIs(t, err, actor.ErrFutureReused)
		assert.Equal(t, 1, o.runs)
	})
}
