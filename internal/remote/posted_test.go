//go:build linux

package remote_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// A posted operation's error comes back once, to the first call that asks after its stream's
// work: an event recorded after it, the stream itself, or the whole device; another stream
// never sees it.
func TestPostedErrorsComeBackOnTheirStream(t *testing.T) {
	_, dv := open(t)
	a, err := dv.StreamCreate(backend.StreamNonBlocking, 0)
	require.NoError(t, err)
	b, err := dv.StreamCreate(backend.StreamNonBlocking, 0)
	require.NoError(t, err)
	p, err := dv.Malloc(4096)
	require.NoError(t, err)
	ev, err := dv.EventCreate(backend.EventDisableTiming)
	require.NoError(t, err)
	bad := func(s backend.Stream) { require.NoError(t, dv.Memset(p, 1, 1<<20, s), "posted: no error yet") }

	bad(a)
	require.NoError(t, dv.Memset(p, 2, 16, b))
	require.NoError(t, dv.StreamSynchronize(b), "another stream's synchronize")
	require.NoError(t, dv.EventRecord(ev, a))
	err = dv.EventSynchronize(ev)
	require.ErrorIs(t, err, cudaerr.InvalidValue, "the event recorded after the failed memset")
	require.NoError(t, dv.EventSynchronize(ev), "answered once")
	require.NoError(t, dv.EventQuery(ev))

	bad(a)
	require.ErrorIs(t, dv.StreamSynchronize(a), cudaerr.InvalidValue)
	require.NoError(t, dv.StreamSynchronize(a))

	bad(b)
	require.ErrorIs(t, dv.Synchronize(), cudaerr.InvalidValue, "the device's synchronize")
	require.NoError(t, dv.Synchronize())

	bad(a)
	require.NoError(t, dv.StreamDestroy(a), "a stream destroyed with an error no one asked for")
	require.NoError(t, dv.Synchronize(), "its error went with it")

	// The device went on throughout.
	require.NoError(t, dv.Memset(p, 3, 4096, b))
	require.NoError(t, dv.StreamSynchronize(b))
	require.NoError(t, dv.EventDestroy(ev))
	require.NoError(t, dv.StreamDestroy(b))
	require.NoError(t, dv.Free(p))
}
