//go:build linux

package remote_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/remote"
)

func sleepKernel(t *testing.T, dv *remote.Device) backend.Kernel {
	t.Helper()
	mod, err := dv.LoadModule(backend.ModuleSpec{SimKernels: map[string]backend.SimKernel{"sleep": nil}})
	require.NoError(t, err)
	k, err := dv.ModuleKernel(mod, "sleep")
	require.NoError(t, err)
	return k
}

// While a kernel runs, EventQuery answers "not ready" from the event board when the worker is
// polling, and asks the worker when it is not; once the event is done, the board answers alone.
// The assertions read the backend's call counter, never how many polls fit in a time window:
// whether the worker gets a CPU to poll while the kernel runs is up to the machine's load.
func TestEventQueryAnsweredFromTheBoard(t *testing.T) {
	be, dv := open(t)
	k := sleepKernel(t, dv)
	s, err := dv.StreamCreate(backend.StreamNonBlocking, 0)
	require.NoError(t, err)
	ev, err := dv.EventCreate(backend.EventDisableTiming)
	require.NoError(t, err)

	one := backend.Dim3{X: 1, Y: 1, Z: 1}
	require.NoError(t, dv.Launch(k, one, one, 0, s, []backend.Arg{{Kind: backend.ArgInt32, Bits: 30}}))
	require.NoError(t, dv.EventRecord(ev, s))
	calls := remote.CallsForTest(be)
	queries := uint64(0)
	for {
		err := dv.EventQuery(ev)
		queries++
		if err == nil {
			break
		}
		require.ErrorIs(t, err, cudaerr.NotReady)
		time.Sleep(20 * time.Microsecond)
	}
	made := remote.CallsForTest(be) - calls
	t.Logf("%d queries made %d calls: %d answered from the board", queries, made, queries-made)
	assert.LessOrEqual(t, made, queries, "a query is answered by the board or by one call, never more")

	calls = remote.CallsForTest(be)
	for range 100 {
		require.NoError(t, dv.EventQuery(ev))
	}
	assert.Equal(t, calls, remote.CallsForTest(be), "a completed event is answered from the board")

	// Recorded again: not done until the new record is.
	require.NoError(t, dv.Launch(k, one, one, 0, s, []backend.Arg{{Kind: backend.ArgInt32, Bits: 20}}))
	require.NoError(t, dv.EventRecord(ev, s))
	require.ErrorIs(t, dv.EventQuery(ev), cudaerr.NotReady, "the new record is not done")
	require.NoError(t, dv.StreamSynchronize(s))
	require.NoError(t, dv.EventQuery(ev), "done once its stream was synchronized")

	// An event destroyed and its slot reused starts afresh.
	require.NoError(t, dv.EventDestroy(ev))
	ev2, err := dv.EventCreate(backend.EventDisableTiming)
	require.NoError(t, err)
	require.NoError(t, dv.Launch(k, one, one, 0, s, []backend.Arg{{Kind: backend.ArgInt32, Bits: 20}}))
	require.NoError(t, dv.EventRecord(ev2, s))
	require.ErrorIs(t, dv.EventQuery(ev2), cudaerr.NotReady)
	require.NoError(t, dv.EventSynchronize(ev2))
	require.NoError(t, dv.EventQuery(ev2), "done once synchronized")
	require.NoError(t, dv.EventDestroy(ev2))
	require.NoError(t, dv.StreamDestroy(s))
}

// A posted operation's error is never hidden by the board: the query of an event recorded
// after it asks the worker, and gets the error.
func TestBoardDefersToPostedErrors(t *testing.T) {
	_, dv := open(t)
	s, err := dv.StreamCreate(backend.StreamNonBlocking, 0)
	require.NoError(t, err)
	p, err := dv.Malloc(64)
	require.NoError(t, err)
	ev, err := dv.EventCreate(backend.EventDisableTiming)
	require.NoError(t, err)
	for range 20 {
		require.NoError(t, dv.Memset(p, 0, 1<<20, s)) // out of range: fails in the worker
		require.NoError(t, dv.EventRecord(ev, s))
		var got error
		require.Eventually(t, func() bool {
			got = dv.EventQuery(ev)
			return !errorsIsNotReady(got)
		}, 5*time.Second, 10*time.Microsecond)
		require.ErrorIs(t, got, cudaerr.InvalidValue, "the memset's error, not the board's done")
		require.Eventually(t, func() bool { return dv.EventQuery(ev) == nil }, 5*time.Second, 10*time.Microsecond)
	}
	require.NoError(t, dv.EventDestroy(ev))
	require.NoError(t, dv.Free(p))
	require.NoError(t, dv.StreamDestroy(s))
}

func errorsIsNotReady(err error) bool {
	c, ok := cudaerr.CodeOf(err)
	return ok && c == cudaerr.NotReady
}
