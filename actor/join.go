package actor

import "context"

// Waiter is what WaitAll waits for: a *Future of any result type.
type Waiter interface {
	Wait(ctx context.Context) error
}

// WaitAll waits until every one of ws has completed, or ctx has ended, and returns the first
// error in argument order, or ctx's error. It waits for all of them even when one fails early,
// so that once it returns no operation it waited for still holds what it was given. Nil
// entries are skipped.
func WaitAll(ctx context.Context, ws ...Waiter) error {
	var first error
	for _, w := range ws {
		if w == nil {
			continue
		}
		if err := w.Wait(ctx); err != nil {
			if ctxErr := ctx.Err(); ctxErr != nil {
				return ctxErr
			}
			if first == nil {
				first = err
			}
		}
	}
	return first
}
