package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"runtime/trace"
	"slices"
	"strconv"
	"sync"
	"time"
)

// report is what a load run measured.
type report struct {
	ok, cancelled int
	elapsed       time.Duration
	latencies     []time.Duration // of the answered requests, sorted
	perDevice     map[string]int  // answered requests by the device that ran them
	runtime       runtimeDelta    // what the Go runtime did meanwhile: GC, scheduler latency
	devices       []deviceLoad    // what each device's actor and operations did meanwhile
	// warmup is the slowest of the clients' first requests, sent together before the timed
	// load, each opening its client's connection; warmups is how many there were.
	warmup  time.Duration
	warmups int
}

func (r report) quantile(q float64) time.Duration {
	if len(r.latencies) == 0 {
		return 0
	}
	return r.latencies[min(len(r.latencies)-1, int(q*float64(len(r.latencies))))]
}

func (r report) print(w io.Writer) {
	if r.warmups > 0 {
		fmt.Fprintf(w, "warm-up: %d requests, a client's first each (opening its connection), slowest %v; not counted below\n",
			r.warmups, r.warmup.Round(time.Microsecond))
	}
	fmt.Fprintf(w, "%d requests answered and checked, %d cancelled, in %v: %.0f req/s\n",
		r.ok, r.cancelled, r.elapsed.Round(time.Millisecond), float64(r.ok)/r.elapsed.Seconds())
	p50, p99 := r.quantile(0.50), r.quantile(0.99)
	ratio := 0.0
	if p50 > 0 {
		ratio = float64(p99) / float64(p50)
	}
	fmt.Fprintf(w, "latency p50 %v, p99 %v (%.2f× p50), max %v\n", p50.Round(time.Microsecond), p99.Round(time.Microsecond),
		ratio, r.quantile(1).Round(time.Microsecond))
	printHistogram(w, r.latencies)
	r.runtime.print(w)
	devs := make([]string, 0, len(r.perDevice))
	for d := range r.perDevice {
		devs = append(devs, d)
	}
	slices.Sort(devs)
	for _, d := range devs {
		fmt.Fprintf(w, "device %s: %d requests\n", d, r.perDevice[d])
	}
	slices.SortFunc(r.devices, func(a, b deviceLoad) int { return a.ordinal - b.ordinal })
	for _, d := range r.devices {
		d.print(w, r.perDevice[strconv.Itoa(d.ordinal)])
	}
}

// generateLoad runs c.clients clients against the service at url for c.duration, each sending
// one request after another and checking every element of every answer. A fraction c.cancel
// of the requests is cancelled at a random moment within c.cancelWithin; those may end either
// way, and count as cancelled when they do not answer.
// With tr, each request is a trace region (traceRegionRequest) and a slow one is traced.
func generateLoad(ctx context.Context, url string, c config, tr *slowTracer) (report, error) {
	client := loadClient(c)
	defer client.CloseIdleConnections()
	n := c.size / 4
	var mu sync.Mutex
	rep := report{perDevice: map[string]int{}}
	errs := make([]error, c.clients)
	var wg sync.WaitGroup
	// Every client opens its connection with one request before the clock starts: 64 dials at
	// once stall the first requests for tens of milliseconds, a cost of the load's start that
	// no request of the steady load pays.
	warm := make([]time.Duration, c.clients)
	for id := range c.clients {
		wg.Go(func() {
			var buf clientMemory
			var err error
			if _, warm[id], err = timedCall(ctx, client, url, n, "", id, -1, &buf); err != nil {
				errs[id] = fmt.Errorf("client %d, warm-up request: %w", id, err)
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return rep, err
	}
	rep.warmup, rep.warmups = slices.Max(warm), c.clients
	before := sampleRuntime()
	start := time.Now()
	deadline := start.Add(c.duration)
	for id := range c.clients {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(id), 7))
			var buf clientMemory
			var lat []time.Duration
			ok, cancelled := 0, 0
			devs := map[string]int{}
			for i := 0; time.Now().Before(deadline); i++ {
				rctx, cancel := context.WithCancel(ctx)
				if rng.Float64() < c.cancel {
					time.AfterFunc(time.Duration(rng.Int64N(int64(c.cancelWithin)+1)), cancel)
				}
				rid := ""
				if tr != nil {
					rid = requestID(id, i)
				}
				dev, took, err := timedCall(rctx, client, url, n, rid, id, i, &buf)
				cancel()
				switch {
				case err == nil:
					ok++
					lat = append(lat, took)
					devs[dev]++
					tr.observe(rid, took)
				case rctx.Err() != nil && ctx.Err() == nil:
					cancelled++
				default:
					errs[id] = fmt.Errorf("client %d, request %d: %w", id, i, err)
					return
				}
			}
			mu.Lock()
			defer mu.Unlock()
			rep.ok += ok
			rep.cancelled += cancelled
			rep.latencies = append(rep.latencies, lat...)
			for d, k := range devs {
				rep.perDevice[d] += k
			}
		})
	}
	wg.Wait()
	rep.elapsed = time.Since(start)
	rep.runtime = diffRuntime(before, sampleRuntime(), rep.ok)
	slices.Sort(rep.latencies)
	return rep, errors.Join(errs...)
}

// timedCall is call, timed; a request with an id (rid) is a trace region that logs its id
// and, when answered, its latency (slowtrace.go).
func timedCall(ctx context.Context, client *http.Client, url string, n int, rid string, id, i int, m *clientMemory) (dev string, took time.Duration, err error) {
	if rid == "" {
		t0 := time.Now()
		dev, err = call(ctx, client, url, n, rid, id, i, m)
		return dev, time.Since(t0), err
	}
	traceRegion(ctx, traceRegionRequest, rid, func() {
		t0 := time.Now()
		dev, err = call(ctx, client, url, n, rid, id, i, m)
		took = time.Since(t0)
		if err == nil && trace.IsEnabled() {
			trace.Log(ctx, traceCategoryLatency, took.String())
		}
	})
	return dev, took, err
}

// loadClient is the load's HTTP client: a connection per client, each with a write buffer
// that holds a whole request. With the default 4 KiB buffer the transport's copy of a body
// fills the buffer, flushes it, and hands the rest to the connection's ReadFrom, which
// allocates a 32 KiB buffer for every request: the generator's largest garbage, which the
// service it measures, in the same process, would collect.
func loadClient(c config) *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: c.clients, WriteBufferSize: 2*c.size + 4<<10}}
}

// clientMemory is what a client's requests are made and checked in, one request after
// another, so that the load generator's garbage does not weigh on the service it measures.
type clientMemory struct {
	x, y      []float32
	body, got []byte
}

// call sends request i of client id, named rid: n floats of x and y, and a, all derived from
// id and i; it checks the answer element by element against Go's float32(a*x)+y and returns
// the device that ran it.
func call(ctx context.Context, client *http.Client, url string, n int, rid string, id, i int, m *clientMemory) (string, error) {
	a := float32((id+i)%7+1) * 0.25
	m.x, m.y = resize(m.x, n), resize(m.y, n)
	x, y := m.x, m.y
	for j := range x {
		x[j] = float32((j*7+id+i)%1000) / 250
		y[j] = float32((j*13+id)%500) / 100
	}
	m.body = resize(m.body, 8*n)
	encode(m.body[:4*n], x)
	encode(m.body[4*n:], y)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/saxpy?a="+strconv.FormatFloat(float64(a), 'g', -1, 32), bytes.NewReader(m.body))
	if err != nil {
		return "", err
	}
	if rid != "" {
		req.Header.Set(requestIDHeader, rid)
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(resp.Body)
		return "", fmt.Errorf("%s: %s", resp.Status, bytes.TrimSpace(msg))
	}
	m.got = resize(m.got, 4*n+1) // one byte more, to see that the answer ends where it should
	k, err := io.ReadFull(resp.Body, m.got)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return "", fmt.Errorf("reading the answer: %w", err)
	}
	if k != 4*n || err == nil {
		more, _ := io.Copy(io.Discard, resp.Body)
		return "", fmt.Errorf("answer of %d bytes, want %d", int64(k)+more, 4*n)
	}
	for j := range n {
		v := math.Float32frombits(binary.LittleEndian.Uint32(m.got[4*j:]))
		if want := float32(a*x[j]) + y[j]; v != want {
			return "", fmt.Errorf("element %d: got %v, want %v", j, v, want)
		}
	}
	return resp.Header.Get("Gpu-Device"), nil
}
