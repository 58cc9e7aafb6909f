package actor

// ProbeResult is what a Prober's Probe did.
type ProbeResult uint8

const (
	// ProbeWait: there was nothing to ask yet (the producer has not said where the result
	// will come from); the call was cheap, and the waiter polls on as usual.
	ProbeWait ProbeResult = iota
	// ProbeAsked: the prober asked the producer's source and completed the future if the
	// answer was there. The call may have cost as much as a driver call, so the waiter reads
	// its clock and its context before the next one.
	ProbeAsked
	// ProbeStop: the waiter must not probe this future again: the answer will come from the
	// producer (an error the producer must report, or a source the producer took back).
	ProbeStop
)

// Prober lets a goroutine spinning in Await find a future's result itself rather than wait
// for the producer to hand it over: a stream operation's future asks CUDA whether the GPU
// has passed the event that covers the operation, from the waiter's own thread.
//
// Probe runs on waiters' goroutines, any number at once and concurrently with the producer;
// when it finds the result it completes the future through its promise (Promise.Complete,
// whose first caller wins), so that the producer and every prober agree on one result. It
// must be brief (one call, not a wait) and must not panic.
type Prober interface {
	Probe() ProbeResult
}

// ProbedCompleter is a Completer that is also its future's Prober.
type ProbedCompleter[T any] interface {
	Completer[T]
	Prober
}

// OnCompleteProbed is OnComplete for a Completer that is also the future's Prober: besides
// being told of the result, c.Probe is called by waiters spinning in Await, between their
// polls past the first tight ones, while the future is pending. Set it before the future can
// be awaited (before the promise is sent). Unlike OnComplete's, c stays referenced by the
// future after it completes, since a waiter may still be reading it.
func (p *Promise[T]) OnCompleteProbed(c ProbedCompleter[T]) { p.f.done, p.f.probed = c, true }
