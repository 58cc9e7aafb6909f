package group_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/group"
	"github.com/gpuactor/gpuactor/internal/testleak"
	"github.com/gpuactor/gpuactor/streams"
)

// A storm of Do calls whose contexts end at random moments, queued, starting or running: a Do
// that says the context ended is about a job that did not complete, and one that returns nil
// is about a job that did. Each job ignores its context once it started, as a job whose work
// is already on the GPU does, and marks itself complete. Once the storm is over no job is
// counted queued.
func TestDoNeverSaysCancelledForAJobThatRan(t *testing.T) {
	submit := func(g *group.Group, ctx context.Context, fn group.Job, opts ...group.JobOption) error {
		return g.Submit(ctx, fn, opts...).Wait(context.WithoutCancel(ctx))
	}
	// LeastOutstanding queues in the shared queue, RoundRobin on each device's own: a job
	// cancelled as it is queued there used to leave its device's Queued count one up for good.
	for _, policy := range []group.Policy{group.LeastOutstanding, group.RoundRobin} {
		t.Run("Do/"+policy.String(), func(t *testing.T) { cancellationStorm(t, (*group.Group).Do, policy) })
		// Submit's future is as honest, for a caller that waits for it past ctx's end.
		t.Run("Submit/"+policy.String(), func(t *testing.T) { cancellationStorm(t, submit, policy) })
	}
}

func cancellationStorm(t *testing.T, do func(*group.Group, context.Context, group.Job, ...group.JobOption) error, policy group.Policy) {
	testleak.AtCleanup(t)
	devs := openSims(t, 2)
	g := newGroup(t, devs, group.WithStreams(2), group.WithPolicy(policy))
	const calls, callers = 3200, 32
	type call struct {
		err       error
		completed atomic.Bool
	}
	results := make([]call, calls)
	var wg sync.WaitGroup
	for c := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(c), 1))
			for i := c; i < calls; i += callers {
				ctx, cancel := context.WithCancel(context.Background())
				stop := time.AfterFunc(time.Duration(r.IntN(200))*time.Microsecond, cancel)
				work := time.Duration(r.IntN(100)) * time.Microsecond
				results[i].err = do(g, ctx, func(context.Context, *device.Device, *streams.Stream) error {
					time.Sleep(work)
					results[i].completed.Store(true)
					return nil
				})
				stop.Stop()
				cancel()
			}
		}()
	}
	wg.Wait()
	require.Eventually(t, func() bool { // the jobs Do gave up on finish; the cancelled leave
		st := g.Stats()
		running := int64(0)
		for _, d := range st.Devices {
			running += d.Running
		}
		return running == 0
	}, time.Minute, time.Millisecond)
	st := g.Stats()
	assert.Zero(t, st.Waiting)
	for i, d := range st.Devices {
		assert.Zero(t, d.Queued, "device %d", i)
	}
	require.NoError(t, g.Close(context.Background())) // every job that started has ended
	var ran, neverRan, lied int
	for i := range results {
		switch err, completed := results[i].err, results[i].completed.Load(); {
		case err == nil:
			assert.True(t, completed, "Do returned nil for a job that did not run")
			ran++
		case errors.Is(err, context.Canceled) && completed:
			lied++
		case errors.Is(err, context.Canceled):
			neverRan++
		default:
			assert.NoError(t, err)
		}
	}
	t.Logf("%d ran, %d never ran, %d said cancelled after running to completion", ran, neverRan, lied)
	assert.Zero(t, lied, "Do said cancelled for jobs that ran to completion")
}
