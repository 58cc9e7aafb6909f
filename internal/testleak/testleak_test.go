package testleak_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/internal/testleak"
)

// A goroutine that ends after a while is waited for.
func TestSettleWaitsForFinishingGoroutines(t *testing.T) {
	base := testleak.Base()
	release := make(chan struct{})
	done := make(chan struct{})
	go func() { <-release; time.Sleep(20 * time.Millisecond); close(done) }()
	require.Greater(t, testleak.Base(), base)
	close(release)
	testleak.Settle(t, base)
	select {
	case <-done:
	default:
		t.Fatal("Settle returned before the goroutine ended")
	}
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

// A goroutine still running after the deadline fails the check: one extra goroutine is
// enough, since the check itself adds none.
func TestSettleFailsOnOneLeakedGoroutine(t *testing.T) {
	base := testleak.Base()
	stop := make(chan struct{})
	defer close(stop)
	go func() { <-stop }()
	r := &recorder{TB: t}
	func() {
		defer func() { assert.Equal(t, r, recover()) }()
		testleak.SettleWithin(r, base, 50*time.Millisecond)
	}()
	assert.True(t, r.failed)
}
