package main

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/pprof"
	"runtime/trace"
	"sync"
	"time"
)

// The names a request is marked with in an execution trace, which examples/service/tracetool
// looks for: the client's region around the whole request, the server's around its handler,
// and the job's around the group job (on the handler's goroutine, or on a group worker's when
// the job was queued). Each logs the request's id under traceCategoryID first thing; the
// client logs its latency under traceCategoryLatency when the answer is in.
const (
	traceRegionRequest   = "service.request"
	traceRegionHandle    = "service.handle"
	traceRegionJob       = "service.job"
	traceCategoryID      = "service.id"
	traceCategoryLatency = "service.latency"
	requestIDHeader      = "Request-Id"
)

// requestID names request i of client id, in the trace and in the Request-Id header.
func requestID(client, i int) string { return fmt.Sprintf("c%d.%d", client, i) }

// slowTracer keeps a flight recorder of the process's execution trace running and writes its
// window to a file when a request is slower than the threshold: at most max files, none in
// the first window, and not more often than once per window, so that each file holds stalls
// no other file holds.
type slowTracer struct {
	threshold time.Duration
	window    time.Duration // the least the recorder keeps (MinAge): longer than the slowest request
	dir       string
	max       int
	log       *slog.Logger
	fr        *trace.FlightRecorder

	mu      sync.Mutex
	written []string  // the files written, in order
	last    time.Time // when the last file was written
	busy    bool      // a file is being written
	wg      sync.WaitGroup
}

// Defaults of the -trace-slow flags: a window of a second holds the whole of a 120 ms stall
// and what led to it, and 12 MiB keeps each file (and a few of them, compressed) small enough
// to bring back from a GPU host.
const (
	defaultTraceWindow = time.Second
	defaultTraceBytes  = 12 << 20
	defaultTraceMax    = 3
)

// startSlowTracer starts the flight recorder; the caller calls stop when the load is over.
func startSlowTracer(threshold, window time.Duration, maxBytes uint64, dir string, max int, log *slog.Logger) (*slowTracer, error) {
	if threshold <= 0 || window <= 0 || max <= 0 {
		return nil, fmt.Errorf("-trace-slow %v, -trace-window %v, -trace-max %d: each must be positive", threshold, window, max)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("-trace-dir: %w", err)
	}
	fr := trace.NewFlightRecorder(trace.FlightRecorderConfig{MinAge: window, MaxBytes: maxBytes})
	if err := fr.Start(); err != nil {
		return nil, fmt.Errorf("starting the flight recorder: %w", err)
	}
	// The first window is skipped as if a file had just been written: the load's start dials
	// every client's connection at once, which stalls the first requests tens of milliseconds
	// and would fill the files with what the steady load never does.
	return &slowTracer{threshold: threshold, window: window, dir: dir, max: max, log: log, fr: fr, last: time.Now()}, nil
}

// observe is told each answered request's latency. When it is over the threshold, and a file
// may be written now, it writes the recorder's window, which then holds the whole request (its
// region has ended); it does not wait for the write.
func (t *slowTracer) observe(id string, took time.Duration) {
	if t == nil || took <= t.threshold {
		return
	}
	t.mu.Lock()
	now := time.Now()
	if t.busy || len(t.written) >= t.max || (!t.last.IsZero() && now.Sub(t.last) < t.window) {
		t.mu.Unlock()
		return
	}
	t.busy = true
	name := filepath.Join(t.dir, fmt.Sprintf("slow-%d.trace", len(t.written)+1))
	t.wg.Add(1)
	t.mu.Unlock()
	go func() {
		defer t.wg.Done()
		err := t.write(name)
		t.mu.Lock()
		defer t.mu.Unlock()
		t.busy, t.last = false, time.Now()
		if err != nil {
			t.log.Error("service: writing the slow request's trace", "request", id, "latency", took, "file", name, "error", err)
			return
		}
		t.written = append(t.written, name)
		t.log.Info("service: slow request traced", "request", id, "latency", took, "file", name)
	}()
}

func (t *slowTracer) write(name string) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	_, err = t.fr.WriteTo(w)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// stop waits for a file being written and stops the recorder; it returns the files written.
func (t *slowTracer) stop() []string {
	if t == nil {
		return nil
	}
	t.wg.Wait()
	t.fr.Stop()
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.written
}

// traceRegion runs fn in a trace region named region that first logs id, so that a tool can
// tie the region to the request.
func traceRegion(ctx context.Context, region, id string, fn func()) {
	if !trace.IsEnabled() {
		fn()
		return
	}
	trace.WithRegion(ctx, region, func() {
		trace.Log(ctx, traceCategoryID, id)
		fn()
	})
}

// startCPUProfile starts a CPU profile written to name, for the load; "" starts none. While it
// runs, the execution trace holds its samples too, which say what a goroutine the trace shows
// running was running. stop ends it and closes the file.
func startCPUProfile(name string) (stop func() error, err error) {
	if name == "" {
		return func() error { return nil }, nil
	}
	f, err := os.Create(name)
	if err != nil {
		return nil, fmt.Errorf("-cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("-cpuprofile: %w", err)
	}
	return func() error {
		pprof.StopCPUProfile()
		return f.Close()
	}, nil
}
