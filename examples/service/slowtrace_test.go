package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	xtrace "golang.org/x/exp/trace"
)

// A load run with -trace-slow under the simulator's latency writes one trace (-trace-max 1)
// that holds the marks tracetool looks for: a request's client, handler and job regions, each
// with its id, and the client's latency; the report names the file.
func TestTraceSlowWritesTheRequestsMarks(t *testing.T) {
	c := testConfig(t)
	c.duration = 500 * time.Millisecond
	c.traceSlow, c.traceDir, c.traceWindow, c.traceBytes, c.traceMax = time.Microsecond, t.TempDir(), 100*time.Millisecond, 4<<20, 1
	var out bytes.Buffer
	c.out = &out
	sum, err := run(context.Background(), c)
	require.NoError(t, err)
	want := filepath.Join(c.traceDir, "slow-1.trace")
	require.Equal(t, []string{want}, sum.traces)
	assert.Contains(t, out.String(), "slow request trace: "+want)
	assert.Contains(t, out.String(), "over 20ms")
	assert.Contains(t, out.String(), "actor: busy")

	f, err := os.Open(want)
	require.NoError(t, err)
	defer f.Close()
	r, err := xtrace.NewReader(f)
	require.NoError(t, err)
	regions := map[string]int{}
	ids := map[string]map[string]bool{} // id → the regions that logged it
	open := map[xtrace.GoID][]string{}  // each goroutine's regions begun and not ended
	latencies := 0
	for {
		e, err := r.ReadEvent()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		switch e.Kind() {
		case xtrace.EventRegionBegin:
			regions[e.Region().Type]++
			open[e.Goroutine()] = append(open[e.Goroutine()], e.Region().Type)
		case xtrace.EventRegionEnd:
			if o := open[e.Goroutine()]; len(o) > 0 {
				open[e.Goroutine()] = o[:len(o)-1]
			}
		case xtrace.EventLog:
			l := e.Log()
			switch l.Category {
			case traceCategoryID:
				o := open[e.Goroutine()]
				if len(o) == 0 {
					continue // its region began before the window
				}
				if ids[l.Message] == nil {
					ids[l.Message] = map[string]bool{}
				}
				ids[l.Message][o[len(o)-1]] = true
			case traceCategoryLatency:
				latencies++
			}
		}
	}
	assert.NotZero(t, regions[traceRegionRequest])
	assert.NotZero(t, regions[traceRegionHandle])
	assert.NotZero(t, regions[traceRegionJob])
	assert.NotZero(t, latencies)
	complete := 0
	for id, in := range ids {
		assert.True(t, strings.HasPrefix(id, "c"), id)
		if in[traceRegionRequest] && in[traceRegionHandle] && in[traceRegionJob] {
			complete++
		}
	}
	assert.NotZero(t, complete, "no request with its three regions")
}
