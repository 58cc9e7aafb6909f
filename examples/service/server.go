package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"expvar"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/examples/internal/sample"
	"github.com/gpuactor/gpuactor/streams"
)

// maxBody bounds a request's body: x and y of up to 16 Mi floats each.
const maxBody = 128 << 20

// service runs saxpy requests over every device it was given.
type service struct {
	gpus []*gpu
}

// gpu is one device of the service: its kernel, a pool of streams that requests borrow, and
// how many requests it holds now (for placement) and has served.
type gpu struct {
	dev     *device.Device
	saxpy   *device.Kernel
	streams chan *streams.Stream
	active  atomic.Int64
	served  atomic.Int64
}

// newService compiles the kernel on each device and makes perDevice streams on each.
func newService(ctx context.Context, devs []*device.Device, perDevice int) (*service, error) {
	s := &service{}
	for _, dev := range devs {
		k, err := sample.Saxpy(ctx, dev)
		if err != nil {
			return nil, errors.Join(err, s.close(ctx))
		}
		g := &gpu{dev: dev, saxpy: k, streams: make(chan *streams.Stream, perDevice)}
		s.gpus = append(s.gpus, g)
		for range perDevice {
			st, err := streams.New(ctx, dev)
			if err != nil {
				return nil, errors.Join(err, s.close(ctx))
			}
			g.streams <- st
		}
	}
	return s, nil
}

// close destroys the streams, once no request holds one (after the HTTP server's Shutdown).
func (s *service) close(ctx context.Context) error {
	var errs []error
	for _, g := range s.gpus {
		for len(g.streams) > 0 {
			errs = append(errs, (<-g.streams).Close(ctx))
		}
	}
	return errors.Join(errs...)
}

// pick places a request on the healthy device holding the fewest requests now.
func (s *service) pick() (*gpu, error) {
	var best *gpu
	for _, g := range s.gpus {
		if g.dev.Err() != nil || g.dev.Stats().Closed {
			continue
		}
		if best == nil || g.active.Load() < best.active.Load() {
			best = g
		}
	}
	if best == nil {
		return nil, errors.New("no device is taking work")
	}
	return best, nil
}

// handler is the service's HTTP interface:
//
//	POST /saxpy?a=A   body: x then y, n little-endian float32 each; answer: a*x+y (n floats)
//	GET  /debug/vars  expvar's variables and every device's Stats under "gpuactor"
func (s *service) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /saxpy", s.serveSaxpy)
	mux.HandleFunc("GET /debug/vars", s.serveVars)
	return mux
}

func (s *service) serveSaxpy(w http.ResponseWriter, r *http.Request) {
	a, err := strconv.ParseFloat(r.URL.Query().Get("a"), 32)
	if err != nil {
		http.Error(w, "a: "+err.Error(), http.StatusBadRequest)
		return
	}
	sc := scratches.Get().(*scratch)
	// sc goes back to the pool when the handler returns, unless a copy of the request may
	// still write to it: after a failed or abandoned saxpy.
	reuse := true
	defer func() {
		if reuse {
			scratches.Put(sc)
		}
	}()
	body, err := sc.read(w, r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if len(body) == 0 || len(body)%8 != 0 {
		http.Error(w, fmt.Sprintf("body of %d bytes: want x and y, the same number of float32 each", len(body)), http.StatusBadRequest)
		return
	}
	n := len(body) / 8
	sc.x, sc.y = decode(sc.x, body[:4*n]), decode(sc.y, body[4*n:])
	x, y := sc.x, sc.y

	g, err := s.pick()
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	g.active.Add(1)
	err = g.saxpyOn(r.Context(), float32(a), x, y)
	g.active.Add(-1)
	reuse = err == nil
	switch {
	case err == nil:
	case r.Context().Err() != nil:
		// The client has gone: nobody reads an answer.
		return
	case errors.Is(err, device.ErrClosed):
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	default:
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	g.served.Add(1)
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Gpu-Device", strconv.Itoa(g.dev.Ordinal()))
	sc.out = encode(sc.out, y)
	w.Header().Set("Content-Length", strconv.Itoa(len(sc.out)))
	_, _ = w.Write(sc.out)
}

// scratch is one request's memory: its body, x and y, and the answer. Requests take one from
// scratches and give it back when they are done with it, so that a busy service does not
// leave ~100 KiB of garbage a request (at 10,000 requests a second, the collector's pauses
// would set the tail latency).
type scratch struct {
	body []byte
	x, y []float32
	out  []byte
}

var scratches = sync.Pool{New: func() any { return new(scratch) }}

// read reads r's body into sc's memory: at once when the client said how long it is, else
// as it comes. A body over maxBody is refused.
func (sc *scratch) read(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	body := http.MaxBytesReader(w, r.Body, maxBody)
	if r.ContentLength < 0 || r.ContentLength > maxBody {
		return io.ReadAll(body)
	}
	sc.body = resize(sc.body, int(r.ContentLength))
	if _, err := io.ReadFull(body, sc.body); err != nil {
		return nil, err
	}
	return sc.body, nil
}

// saxpyOn runs y = a*x + y on one of g's streams: stream-ordered device memory, the copies
// staged through the device's pinned pool, the kernel, and the answer back in y. The
// request's context bounds every wait; the buffers are freed whatever happens.
func (g *gpu) saxpyOn(ctx context.Context, a float32, x, y []float32) error {
	var s *streams.Stream
	select {
	case s = <-g.streams:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { g.streams <- s }()
	n := len(x)
	free := context.WithoutCancel(ctx) // a free must be queued even when the request ended
	dx, _, err := alloc.MallocAsync[float32](ctx, s, n)
	if err != nil {
		return err
	}
	defer dx.Close(free)
	dy, _, err := alloc.MallocAsync[float32](ctx, s, n)
	if err != nil {
		return err
	}
	defer dy.Close(free)
	cfg := cuda.LaunchConfig{Grid: cuda.Dim(uint32((n + 255) / 256)), Block: cuda.Dim(256)}
	return actor.WaitAll(ctx,
		streams.CopyToDevice(ctx, s, dx, x),
		streams.CopyToDevice(ctx, s, dy, y),
		s.Launch(ctx, g.saxpy, cfg, int32(n), a, dx, dy),
		streams.CopyFromDevice(ctx, s, y, dy),
	)
}

// serveVars writes expvar's variables, as expvar.Handler does, with every device's Stats
// added under "gpuactor" (kept off expvar's global registry, which a variable can join only
// once per process).
func (s *service) serveVars(w http.ResponseWriter, _ *http.Request) {
	vars := map[string]json.RawMessage{}
	expvar.Do(func(kv expvar.KeyValue) { vars[kv.Key] = json.RawMessage(kv.Value.String()) })
	stats := make([]device.Stats, len(s.gpus))
	for i, g := range s.gpus {
		stats[i] = g.dev.Stats()
	}
	b, err := json.Marshal(stats)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	vars["gpuactor"] = b
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_ = json.NewEncoder(w).Encode(vars)
}

// resize is s with length n, in s's own array when it has room.
func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// decode reads b's little-endian float32s into f (resized).
func decode(f []float32, b []byte) []float32 {
	f = resize(f, len(b)/4)
	for i := range f {
		f[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return f
}

// encode writes f as little-endian float32s into b (resized).
func encode(b []byte, f []float32) []byte {
	b = resize(b, 4*len(f))
	for i, v := range f {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return b
}
