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

// SetProber makes Await's spin call pr.Probe between its polls, past its first tight polls,
// while the future is pending. Set it before the future can be awaited (before the promise
// is sent); nil removes it.
func (p *Promise[T]) SetProber(pr Prober) { p.f.probe = pr }
