// Package testleak checks in tests that goroutines started during a test are gone by its end.
//
// It imports nothing of the module, so that the packages below device (actor, internal/sim,
// internal/worker) can use it without an import cycle.
//
// The rule: take a baseline with [Base] before the work starts, then call [Settle] once the
// work is closed. Settle polls runtime.NumGoroutine on the calling (test) goroutine until the
// count is at or below the baseline, and fails the test if it is still above after [Deadline].
//
// Why poll by hand rather than with assert.Eventually: Eventually runs its condition on a
// goroutine of its own, which is then counted, so a check through it must allow one extra
// goroutine and would miss a leak of exactly one. Polling here adds no goroutine, so the
// comparison is exact: at or below the baseline.
//
// Why the deadline is long: goroutines that are finishing may need time on a loaded machine,
// while a leaked goroutine never finishes; a long deadline costs time only when the test fails.
package testleak

import (
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Deadline is how long [Settle] waits for the goroutines to come back to the baseline.
const Deadline = time.Minute

// poll is how often [Settle] counts the goroutines.
const poll = 2 * time.Millisecond

// Base returns the current number of goroutines, the baseline to pass to [Settle]. Take it
// before the work that must not leak starts.
func Base() int { return runtime.NumGoroutine() }

// Settle waits, on the calling goroutine, until no more goroutines run than base, and fails
// the test with every goroutine's stack if that has not happened within [Deadline]. It
// returns as soon as the count is at or below base.
func Settle(t testing.TB, base int) {
	t.Helper()
	SettleWithin(t, base, Deadline)
}

// SettleWithin is [Settle] with a deadline of d instead of [Deadline]. Only a test of a
// leak that must be caught quickly has reason to shorten it.
func SettleWithin(t testing.TB, base int, d time.Duration) {
	t.Helper()
	n := runtime.NumGoroutine()
	for deadline := time.Now().Add(d); n > base && time.Now().Before(deadline); n = runtime.NumGoroutine() {
		time.Sleep(poll)
	}
	if n <= base {
		return
	}
	buf := make([]byte, 1<<20)
	require.LessOrEqual(t, n, base, "%d goroutines left behind; all goroutines:\n%s", n-base, buf[:runtime.Stack(buf, true)])
}

// AtCleanup takes the baseline now and calls [Settle] when the test and its subtests have
// finished, after the cleanups registered later (which close what the test opened) have run.
func AtCleanup(t testing.TB) {
	t.Helper()
	base := Base()
	t.Cleanup(func() { Settle(t, base) })
}
