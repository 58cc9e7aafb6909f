//go:build linux && (amd64 || arm64)

package shmring

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/internal/spin"
)

// TestNoSpinTokenSleepsAtOnce: while the process's spin budget has no token to spare, a
// receiver with a long spin window sleeps at once (its idle function, called only while it
// spins, never runs), and the budget counts the refusal; a send still wakes it.
func TestNoSpinTokenSleepsAtOnce(t *testing.T) {
	if !multiCPU {
		t.Skip("a ring never spins on one CPU")
	}
	budget := spin.Process()
	held := 0
	for budget.Acquire() {
		held++
	}
	defer func() {
		for range held {
			budget.Release()
		}
	}()
	before := budget.Stats()

	prod, cons := pair(t, 0)
	longSleeps(prod, cons)
	cons.SetSpin(10 * time.Second)
	var calls atomic.Int64
	cons.SetIdle(func() bool { calls.Add(1); return true })
	got := make(chan struct{})
	go func() {
		_, err := cons.Recv(context.Background(), nil)
		assert.NoError(t, err)
		close(got)
	}()
	require.Eventually(t, func() bool { return cons.sh.dataSleepers.Load() != 0 }, 5*time.Second, time.Millisecond,
		"asleep without spinning")
	assert.Zero(t, calls.Load(), "it never spun")
	assert.Greater(t, budget.Stats().Refusals, before.Refusals, "refused a token")
	require.NoError(t, prod.Send(context.Background(), []byte("x")))
	select {
	case <-got:
	case <-time.After(wakeBound):
		t.Fatal("not woken by the send")
	}
	cons.SetIdle(nil)
}
