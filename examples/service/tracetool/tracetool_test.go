package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"path/filepath"
	"runtime/pprof"
	"runtime/trace"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// served marks a request as the service does (slowtrace.go): a client region on this
// goroutine, a handler region on another, and a job region on a third, which blocks on a
// channel for hold; the id is logged first in each.
func served(ctx context.Context, id string, hold time.Duration) {
	trace.WithRegion(ctx, regionRequest, func() {
		trace.Log(ctx, categoryID, id)
		var wg sync.WaitGroup
		wg.Go(func() {
			trace.WithRegion(ctx, regionHandle, func() {
				trace.Log(ctx, categoryID, id)
				done := make(chan struct{})
				go func() {
					defer close(done)
					trace.WithRegion(ctx, regionJob, func() {
						trace.Log(ctx, categoryID, id)
						<-time.After(hold) // the "device work": a channel receive
					})
				}()
				<-done
			})
		})
		wg.Wait()
		trace.Log(ctx, categoryLatency, "x")
	})
}

// record traces fn into a buffer.
func record(t *testing.T, fn func()) []byte {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, trace.Start(&buf))
	fn()
	trace.Stop()
	return buf.Bytes()
}

// The tool finds the slow request by its regions, splits its time into phases, and says that
// its job waited on a channel receive for as long as it was held; the fast request is not
// explained with -n 1.
func TestExplainsWhatASlowRequestWaitedOn(t *testing.T) {
	ctx := context.Background()
	data := record(t, func() {
		served(ctx, "c1.1", time.Millisecond)
		served(ctx, "c2.7", 40*time.Millisecond)
	})
	m, err := parse(bytes.NewReader(data))
	require.NoError(t, err)
	reqs := m.requests()
	require.Len(t, reqs, 2)
	slow := reqs[1]
	assert.Equal(t, "c2.7", slow.id)
	require.NotNil(t, slow.handle)
	require.Len(t, slow.jobs, 1)
	assert.GreaterOrEqual(t, slow.latency(), 40*time.Millisecond)
	assert.NotEqual(t, slow.handle.g, slow.client.g)
	assert.NotEqual(t, slow.jobs[0].g, slow.handle.g)

	job := m.gs[slow.jobs[0].g].split(slow.jobs[0].from, slow.jobs[0].to)
	assert.GreaterOrEqual(t, job.waiting, 35*time.Millisecond, "the job waited on its channel")
	waits := top(job.waits, 1)
	require.Len(t, waits, 1)
	assert.Contains(t, waits[0].k, "chan receive")

	var out strings.Builder
	m.report(&out, 1, 0)
	text := out.String()
	assert.Contains(t, text, "2 requests complete in it")
	assert.Contains(t, text, "request c2.7:")
	assert.NotContains(t, text, "request c1.1:")
	assert.Contains(t, text, "job (device work; retries included)")
	assert.Contains(t, text, "job (queued: on a group worker)")
	assert.Regexp(t, `waited +4\d\.\d{3} ms  chan receive`, text)
	// The timeline: ten slices, the request itself completing in the last one.
	assert.Contains(t, text, "timeline, slices of 4.")
	assert.Regexp(t, `\n +3\d\.\d{3} ms +1 `, text, "the last slice holds the request's own completion")

	// -min picks every request at least that slow.
	out.Reset()
	m.report(&out, 1, time.Microsecond)
	assert.Contains(t, out.String(), "request c1.1:")

	// The same trace gzipped reads the same.
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, err = zw.Write(data)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	name := filepath.Join(t.TempDir(), "slow-1.trace.gz")
	require.NoError(t, os.WriteFile(name, gz.Bytes(), 0o644))
	out.Reset()
	require.NoError(t, analyze(&out, name, 1, 0))
	assert.Contains(t, out.String(), "request c2.7:")
}

// A file that is not a trace, an empty one and a missing one are refused with an error that
// says so; a gzipped trace reads as the trace does.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	notTrace := filepath.Join(dir, "x.trace")
	require.NoError(t, os.WriteFile(notTrace, []byte("hello, world"), 0o644))
	err := analyze(&strings.Builder{}, notTrace, 3, 0)
	assert.ErrorContains(t, err, "not a Go execution trace")

	empty := filepath.Join(dir, "empty.trace")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	assert.Error(t, analyze(&strings.Builder{}, empty, 3, 0))

	assert.ErrorIs(t, analyze(&strings.Builder{}, filepath.Join(dir, "missing.trace"), 3, 0), os.ErrNotExist)

	notGzip := filepath.Join(dir, "x.trace.gz")
	require.NoError(t, os.WriteFile(notGzip, []byte("plain"), 0o644))
	assert.Error(t, analyze(&strings.Builder{}, notGzip, 3, 0))
}

// A trace with no request regions says so rather than explaining nothing silently.
func TestNoRequests(t *testing.T) {
	data := record(t, func() { time.Sleep(time.Millisecond) })
	m, err := parse(bytes.NewReader(data))
	require.NoError(t, err)
	var out strings.Builder
	m.report(&out, 3, 0)
	assert.Contains(t, out.String(), "no request regions")
}

// With a CPU profile running beside the trace, the samples taken during the slow request are
// listed, by the function they caught running.
func TestCPUSamplesInTheRequest(t *testing.T) {
	ctx := context.Background()
	var prof bytes.Buffer
	require.NoError(t, pprof.StartCPUProfile(&prof))
	data := record(t, func() {
		trace.WithRegion(ctx, regionRequest, func() {
			trace.Log(ctx, categoryID, "c9.9")
			spinFor(200 * time.Millisecond)
		})
	})
	pprof.StopCPUProfile()
	m, err := parse(bytes.NewReader(data))
	require.NoError(t, err)
	require.NotEmpty(t, m.samples, "a CPU profile at 100 Hz samples a 200 ms loop")
	var out strings.Builder
	m.report(&out, 1, 0)
	assert.Contains(t, out.String(), "CPU profile samples in the request")
	assert.Contains(t, out.String(), "time.runtimeNow in examples/service/tracetool.spinFor", "the leaf and the loop's own frame")
}

// spinFor keeps the CPU busy for d.
//
//go:noinline
func spinFor(d time.Duration) {
	for end := time.Now().Add(d); time.Now().Before(end); {
	}
}
