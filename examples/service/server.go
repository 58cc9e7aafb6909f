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
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if len(body) == 0 || len(body)%8 != 0 {
		http.Error(w, fmt.Sprintf("body of %d bytes: want x and y, the same number of float32 each", len(body)), http.StatusBadRequest)
		return
	}
	n := len(body) / 8
	x, y := floats(body[:4*n]), floats(body[4*n:])

	g, err := s.pick()
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	g.active.Add(1)
	err = g.saxpyOn(r.Context(), float32(a), x, y)
	g.active.Add(-1)
	switch {
	case err == nil:
	case r.Context().Err() != nil:
		return // the client has gone: nobody reads an answer
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
	_, _ = w.Write(bytesOf(y))
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

func floats(b []byte) []float32 {
	f := make([]float32, len(b)/4)
	for i := range f {
		f[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return f
}

func bytesOf(f []float32) []byte {
	b := make([]byte, 4*len(f))
	for i, v := range f {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return b
}
