package group_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/spin"
	"github.com/gpuactor/gpuactor/streams"
)

// TestWorkersDrawOnTheSpinBudget: idle workers poll for their next job only with a token of
// the process's spin budget. With every token held elsewhere they ask, are refused and park,
// and the jobs still all run; with tokens to spare they take some. (openSims' devices and their
// futures do not spin, so the workers are the only spinners here.)
func TestWorkersDrawOnTheSpinBudget(t *testing.T) {
	budget := spin.Process()
	if budget.Stats().Limit == 0 {
		t.Skip("GOMAXPROCS 1: nobody spins")
	}
	g := newGroup(t, openSims(t, 2))
	ctx := context.Background()
	var ran atomic.Int32
	job := func(context.Context, *device.Device, *streams.Stream) error { ran.Add(1); return nil }

	held := 0
	for budget.Acquire() {
		held++
	}
	before := budget.Stats()
	for range 100 {
		g.Go(ctx, job)
	}
	require.NoError(t, g.Wait())
	during := budget.Stats()
	for range held {
		budget.Release()
	}
	assert.Equal(t, int32(100), ran.Load(), "parked workers still take every job")
	assert.Greater(t, during.Refusals, before.Refusals, "the workers asked")

	// With tokens to spare the workers take some. Whether a given idle moment finds the one
	// token of a 2-P host free depends on who else holds it then (the test's own goroutines
	// under a loaded host, say), so batches go on until a grant came, a bounded number.
	jobs := int32(100)
	for batch := 0; batch < 50 && budget.Stats().Grants == during.Grants; batch++ {
		for range 100 {
			g.Go(ctx, job)
		}
		require.NoError(t, g.Wait())
		jobs += 100
	}
	assert.Greater(t, budget.Stats().Grants, during.Grants, "with tokens to spare the workers spin")
	assert.Equal(t, jobs, ran.Load())
}
