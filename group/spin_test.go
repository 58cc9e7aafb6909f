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

	for range 100 {
		g.Go(ctx, job)
	}
	require.NoError(t, g.Wait())
	assert.Greater(t, budget.Stats().Grants, during.Grants, "with tokens to spare the workers spin")
	assert.Equal(t, int32(200), ran.Load())
}
