package streams_test

// The stream-ordered plumbing a streams.Stream is a face over (internal/core's Queue,
// QueueTracked and Submit), driven through a stream of this package, on the simulator and on
// the GPU, beside the package's own operations (host functions) on the same stream.

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
)

func nothing(backend.Device, *core.Tracker, backend.Stream) error { return nil }

// A Then decides the future's result from the GPU's, and a panic in it becomes that future's
// error without stalling the stream's later futures or the device's Close (testdev checks it
// with the test).
func TestQueueTrackedThen(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.Stream(t)
		cs := (*core.Stream)(s)
		for _, marked := range []bool{false, true} {
			t.Run(fmt.Sprintf("marked=%v", marked), func(t *testing.T) {
				replaced := errors.New("replaced")
				seen := errors.New("then never ran")
				err := core.QueueTracked(f.Ctx, cs, nothing, core.Tracking{Marked: marked, Then: func(err error) error {
					seen = err // read after the future completed: Then ran before
					return replaced
				}}).Wait(f.Ctx)
				assert.ErrorIs(t, err, replaced)
				assert.NoError(t, seen, "Then sees the GPU's result")

				err = core.QueueTracked(f.Ctx, cs, nothing, core.Tracking{Marked: marked, Then: func(error) error { panic("then") }}).Wait(f.Ctx)
				var pe *actor.PanicError
				require.ErrorAs(t, err, &pe)
				assert.Equal(t, "then", pe.Value)

				require.NoError(t, core.Queue(f.Ctx, cs, nothing).Wait(f.Ctx), "the stream's later work completes")
				ran := false
				require.NoError(t, s.HostFunc(f.Ctx, func() { ran = true }).Wait(f.Ctx), "and so do the stream's own operations")
				assert.True(t, ran)
			})
		}
		// The old streams.EnqueueThen refused a nil then; a Tracking without Then is the
		// default completion now, which every other test here uses.
	})
}

// A stream operation's message part is used once: submitting it again is refused, and
// leaves the first submission, still in flight, alone.
func TestSubmitRefusesAReusedMsg(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.Stream(t)
		cs := (*core.Stream)(s)
		gate := make(chan struct{})
		held := s.HostFunc(f.Ctx, func() { <-gate })
		o := &countedOp{}
		first := core.Submit(f.Ctx, cs, &o.Msg, o, core.Tracking{})
		second := core.Submit(context.Background(), cs, &o.Msg, o, core.Tracking{})
		assert.ErrorIs(t, second.Wait(f.Ctx), actor.ErrFutureReused)
		assert.NotSame(t, first, second)
		assert.False(t, first.Ready(), "the first submission waits behind the held stream")
		close(gate)
		require.NoError(t, first.Wait(f.Ctx))
		require.NoError(t, held.Wait(f.Ctx))
		assert.Equal(t, 1, o.runs)

		assert.ErrorIs(t, core.Submit(f.Ctx, nil, &(&countedOp{}).Msg, o, core.Tracking{}).Wait(f.Ctx), core.ErrInvalidArgument)
	})
}

// countedOp counts its runs.
type countedOp struct {
	core.Msg
	runs int
}

func (o *countedOp) Enqueue(backend.Device, *core.Tracker, backend.Stream) error {
	o.runs++
	return nil
}

// A Queued operation's future completes once its work is queued, while the GPU has yet to
// reach it; the stream's next tracked operation completes only after it. A reused message is
// refused, however it is tracked.
func TestSubmitQueuedCompletesOnceQueued(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.Stream(t)
		cs := (*core.Stream)(s)
		gate := make(chan struct{})
		held := s.HostFunc(f.Ctx, func() { <-gate })
		o := &countedOp{}
		require.NoError(t, core.Submit(f.Ctx, cs, &o.Msg, o, core.Tracking{Queued: true}).Wait(f.Ctx))
		assert.Equal(t, 1, o.runs)
		assert.False(t, held.Ready(), "the stream is still held")
		after := core.Queue(f.Ctx, cs, nothing)
		close(gate)
		require.NoError(t, after.Wait(f.Ctx))
		assert.True(t, held.Ready(), "the GPU passed the held work before the later operation")

		assert.ErrorIs(t, core.Submit(f.Ctx, cs, &o.Msg, o, core.Tracking{Queued: true}).Wait(f.Ctx), actor.ErrFutureReused)
		assert.ErrorIs(t, core.Submit(f.Ctx, cs, &o.Msg, o, core.Tracking{}).Wait(f.Ctx), actor.ErrFutureReused)
		assert.Equal(t, 1, o.runs)
	})
}
