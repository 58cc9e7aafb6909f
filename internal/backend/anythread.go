package backend

// AnyThreadEventQuerier is implemented by a Device whose event queries may be made from any
// goroutine, concurrently with the device's own calls on its actor's thread: the exception to
// the rule that a Device is called from one thread only. A waiter spinning on a stream
// operation's future asks the operation's watermark event through it
// (docs/design/waiter-completion.md). CUDA's event queries are thread-safe; the
// simulator's event state is locked. A Device whose handles live in another process (an
// isolated device's) must not implement it: its waiters get their results from the actor.
//
// The caller must keep e alive (neither destroyed nor recorded again) until the call returns.
type AnyThreadEventQuerier interface {
	// EventQueryAnyThread is EventQuery, callable from any goroutine: nil when e's most
	// recent record has completed, cudaerr.NotReady while it has not, or the error the
	// runtime reports (a sticky fault among them).
	EventQueryAnyThread(e Event) error
}
