//go:build linux

package actor

import (
	"context"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// The whole point of the actor: init, every op from every goroutine, and shutdown run on one
// OS thread, which is what CUDA's per-thread current device needs.
func TestOpsRunOnOneThread(t *testing.T) {
	var initTid, shutdownTid int
	a, err := New(
		WithInit(func() error { initTid = syscall.Gettid(); return nil }),
		WithShutdown(func() { shutdownTid = syscall.Gettid() }),
		WithSpin(0), // parking and waking must not move the goroutine either
	)
	require.NoError(t, err)

	const senders, calls = 16, 200
	tids := make([][]int, senders)
	var wg sync.WaitGroup
	for s := range senders {
		wg.Go(func() {
			ctx := context.Background()
			for range calls {
				tid, err := Call(ctx, a, func() (int, error) { return syscall.Gettid(), nil }).Await(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				tids[s] = append(tids[s], tid)
			}
		})
	}
	wg.Wait()
	require.NoError(t, a.Close())

	require.NotZero(t, initTid)
	require.Equal(t, initTid, shutdownTid)
	for s := range senders {
		require.Len(t, tids[s], calls)
		for _, tid := range tids[s] {
			require.Equal(t, initTid, tid)
		}
	}
}
