package main

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// With -reuse-buffers each stream allocates its buffers once for requests of one size and
// grows them for a larger one; every answer is right whatever the sizes' order; the buffers
// stay on the devices until release, which leaves nothing behind.
func TestReuseBuffers(t *testing.T) {
	ctx := context.Background()
	c := testConfig(t)
	svc := testService(t, c)
	g := svc.g
	svc.reuse = true
	srv := httptest.NewServer(svc.handler())
	defer srv.Close()

	streams := int64(len(g.Stats().Devices) * c.perDevice)
	var m clientMemory
	for i, n := range []int{300, 1000, 300, 4096} {
		_, err := call(ctx, srv.Client(), srv.URL, n, "", 1, i, &m)
		require.NoError(t, err, "n = %d", n)
	}
	grown := svc.kept.allocs.Load()
	assert.LessOrEqual(t, grown, 3*3*streams, "three buffers a stream, at most once per size")
	for i := range 20 {
		_, err := call(ctx, srv.Client(), srv.URL, 4096, "", 2, i, &m)
		require.NoError(t, err)
	}
	assert.LessOrEqual(t, svc.kept.allocs.Load()-grown, 3*streams, "20 requests of one size allocate at most once a stream")

	var held uint64
	for _, d := range g.Stats().Devices {
		held += d.Device.Memory.Async.Count
	}
	assert.NotZero(t, held, "the kept buffers are on the devices")
	require.NoError(t, awaitNoJobs(ctx, g, 5*time.Second))
	svc.kept.release(ctx)
	require.NoError(t, awaitNothingLeft(ctx, g, 5*time.Second))
}

// A poisoned kernel under load with -reuse-buffers: the buffers of the failed device's streams
// are dropped, the requests run again elsewhere and are answered right, and nothing is left
// on the devices at the end (run checks it).
func TestReuseBuffersSurvivesAFault(t *testing.T) {
	c := testConfig(t)
	c.fault, c.reuseBuffers = faultPoison, true
	checkSurvives(t, c, "sim")
}
