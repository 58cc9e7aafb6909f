package device

import (
	"time"

	"github.com/gpuactor/gpuactor/actor"
)

// NoSpin, as a spin window of ActorTuning, turns that spin off: the actor, or its callers,
// park at once instead of polling.
const NoSpin time.Duration = -1

// ActorTuning tunes a device's actor: how much its mailbox holds and how long it and its
// callers poll before they park (docs/design/actor-spin.md). A zero field keeps its default.
// The device's own lifecycle (binding its context, tracking GPU completion, releasing what it
// holds at Close) is not tunable.
type ActorTuning struct {
	// Mailbox is how many messages may wait for the actor before senders block until there
	// is room or their context ends. 0: actor.DefaultMailbox (1024); less than 0 is an error.
	Mailbox int
	// Batch is how many messages the actor runs back to back before it polls the GPU for
	// finished work again. 0: actor.DefaultBatch (64); less than 0 is an error.
	Batch int
	// Spin is how long an idle actor polls its mailbox before it parks: a message that comes
	// meanwhile skips the wake of a parked thread, tens of microseconds.
	// 0: actor.DefaultSpin (50 µs); NoSpin parks as soon as the mailbox is empty.
	Spin time.Duration
	// BusySpin is how long the actor polls the GPU without parking while work is in flight,
	// as CUDA's own wait spins. 0: actor.DefaultBusySpin (20 ms); NoSpin parks between polls,
	// so a completion is seen only when the IdlePoll timer fires.
	BusySpin time.Duration
	// AwaitSpin is how long a caller's Await on the device's futures polls before it parks.
	// 0: actor.DefaultAwaitSpin (100 µs); NoSpin parks callers at once.
	AwaitSpin time.Duration
	// IdlePoll is how long the actor parks at most, between polls of the GPU, while work is
	// in flight and it is not spinning. 0: actor.DefaultIdlePoll (100 µs); less than 0 is an
	// error.
	IdlePoll time.Duration
	// WaiterQuery lets a caller spinning in Await on a stream operation's future ask the GPU
	// itself whether the operation has completed (WaiterQuery). 0: WaiterQueryDefault.
	WaiterQuery WaiterQuery
}

// WithActorTuning tunes the device's actor (ActorTuning). A later WithActorTuning replaces an
// earlier one; Open fails with an error naming the field for a value out of range.
func WithActorTuning(t ActorTuning) Option { return func(c *config) { c.tuning = t } }

// options returns the actor options of t's fields that are set; the actor rejects values out
// of range (ErrBadOption, naming the knob) when the device opens.
func (t ActorTuning) options() []actor.Option {
	var opts []actor.Option
	if t.Mailbox != 0 {
		opts = append(opts, actor.WithMailbox(t.Mailbox))
	}
	if t.Batch != 0 {
		opts = append(opts, actor.WithBatch(t.Batch))
	}
	if t.IdlePoll != 0 {
		opts = append(opts, actor.WithIdlePoll(t.IdlePoll))
	}
	spins := []struct {
		d    time.Duration
		with func(time.Duration) actor.Option
	}{{t.Spin, actor.WithSpin}, {t.BusySpin, actor.WithBusySpin}, {t.AwaitSpin, actor.WithAwaitSpin}}
	for _, s := range spins {
		switch {
		case s.d == NoSpin:
			opts = append(opts, s.with(0))
		case s.d != 0:
			opts = append(opts, s.with(s.d))
		}
	}
	return opts
}
