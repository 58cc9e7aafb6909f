package testleak_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/internal/testleak"
)

// A goroutine that ends after a while is waited for: the check passes once it ended. (Whether
// it returned before that cannot be asserted: goroutines of the testing package itself, the
// previous test's among them, may end meanwhile and bring the count under the baseline.)
func TestSettleWaitsForFinishingGoroutines(t *testing.T) {
	base := testleak.Base()
	release := make(chan struct{})
	go func() { <-release; time.Sleep(20 * time.Millisecond) }()
	require.Greater(t, testleak.Base(), base)
	close(release)
	r := &recorder{TB: t}
	testleak.SettleWithin(r, base, time.Minute)
	assert.False(t, r.failed)
}

// recorder is a testing.TB that records a failure instead of ending the test.
type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Helper()               {}
func (r *recorder) Errorf(string, ...any) { r.failed = true }
func (r *recorder) FailNow()              { r.failed = true; panic(r) }
func (r *recorder) Logf(string, ...any)   {}
func (r *recorder) Cleanup(f func())      { r.TB.Cleanup(f) }

// The check adds no goroutine of its own: at exactly the count it was given it returns at
// once, without failing.
func TestSettleAddsNoGoroutine(t *testing.T) {
	r := &recorder{TB: t}
	testleak.SettleWithin(r, testleak.Base(), time.Minute)
	assert.False(t, r.failed)
}

// More goroutines than the baseline after the deadline fail the check. (The baseline here is
// below what any test binary runs, so that a goroutine of another test ending meanwhile
// cannot make it pass.)
func TestSettleFailsOnGoroutinesLeftBehind(t *testing.T) {
	base := testleak.Base()
	stop := make(chan struct{})
	defer func() {
		close(stop)
		testleak.Settle(t, base) // none left for the next test's baseline
	}()
	go func() { <-stop }()
	r := &recorder{TB: t}
	func() {
		defer func() { assert.Equal(t, r, recover()) }()
		testleak.SettleWithin(r, 1, 50*time.Millisecond)
	}()
	assert.True(t, r.failed)
}
