package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"runtime/trace"
	"strconv"
	"sync"
	"sync/atomic"

	prom "github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/alloc"
	gpuprom "github.com/gpuactor/gpuactor/contrib/prometheus"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/group"
	"github.com/gpuactor/gpuactor/streams"
)

// maxBody bounds a request's body: x and y of up to 16 Mi floats each.
const maxBody = 128 << 20

// service runs saxpy requests as jobs of a group over every device.
type service struct {
	g       *group.Group
	prog    *device.Program
	metrics *prom.Registry
	faults  *faultLog // each device's last failure, which its restart replaced
	reuse   bool      // keep each stream's device buffers for its next job (-reuse-buffers)
	kept    keptBuffers
}

// newService serves requests on g; its metrics are g's (contrib/prometheus's group
// collector) and the Go runtime's.
func newService(g *group.Group, prog *device.Program, faults *faultLog) *service {
	s := &service{g: g, prog: prog, metrics: prom.NewRegistry(), faults: faults}
	s.metrics.MustRegister(gpuprom.NewGroupCollector(g), collectors.NewGoCollector())
	return s
}

// handler is the service's HTTP interface:
//
//	POST /saxpy?a=A   body: x then y, n little-endian float32 each; answer: a*x+y (n floats)
//	GET  /healthz     every device's health, JSON; 503 when no device takes work
//	GET  /metrics     the group's and its devices' metrics, for Prometheus
func (s *service) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /saxpy", s.serveSaxpy)
	mux.HandleFunc("GET /healthz", s.serveHealth)
	mux.Handle("GET /metrics", promhttp.HandlerFor(s.metrics, promhttp.HandlerOpts{}))
	return mux
}

func (s *service) serveSaxpy(w http.ResponseWriter, r *http.Request) {
	if id := r.Header.Get(requestIDHeader); id != "" && trace.IsEnabled() {
		traceRegion(r.Context(), traceRegionHandle, id, func() { s.saxpyRequest(w, r, id) })
		return
	}
	s.saxpyRequest(w, r, "")
}

// saxpyRequest answers a saxpy request; id, when not "", is its Request-Id, which marks its
// job in the execution trace.
func (s *service) saxpyRequest(w http.ResponseWriter, r *http.Request, id string) {
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
	sc.out = resize(sc.out, n)

	// Idempotent: the job reads x and y and writes only out, so when its device fails under
	// it, it runs again on another device (or, when every device is restarting, on the
	// first one back) and the client gets the right answer all the same.
	var ran atomic.Int64
	err = s.g.Do(r.Context(), func(ctx context.Context, d *device.Device, st *streams.Stream) error {
		ran.Store(int64(d.Ordinal()))
		if id == "" {
			return s.saxpy(ctx, d, st, float32(a), sc.x, sc.y, sc.out)
		}
		var err error
		traceRegion(ctx, traceRegionJob, id, func() { err = s.saxpy(ctx, d, st, float32(a), sc.x, sc.y, sc.out) })
		return err
	}, group.Idempotent())
	reuse = err == nil
	switch {
	case err == nil:
	case r.Context().Err() != nil:
		return // the client has gone: nobody reads an answer
	case errors.Is(err, group.ErrNoDevice), errors.Is(err, device.ErrClosed):
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	default:
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Gpu-Device", strconv.FormatInt(ran.Load(), 10))
	sc.body = encode(sc.body, sc.out)
	w.Header().Set("Content-Length", strconv.Itoa(len(sc.body)))
	_, _ = w.Write(sc.body)
}

// saxpy runs out = a*x + y on stream st of device d: stream-ordered device memory, the copies
// staged through the device's pinned pool, the kernel, and the answer back in out. ctx bounds
// every wait; the buffers are freed whatever happens, or, with reuse (-reuse-buffers), kept
// for the stream's next job.
func (s *service) saxpy(ctx context.Context, d *device.Device, st *streams.Stream, a float32, x, y, out []float32) error {
	if !s.reuse {
		return saxpy(ctx, s.prog, d, st, a, x, y, out)
	}
	return s.kept.saxpy(ctx, s.prog, d, st, a, x, y, out)
}

// saxpy runs out = a*x + y on stream st of device d, with prog's kernels there, in device
// buffers it allocates and frees on st.
func saxpy(ctx context.Context, prog *device.Program, d *device.Device, st *streams.Stream, a float32, x, y, out []float32) error {
	n := len(x)
	free := context.WithoutCancel(ctx) // a free must be queued even when the request ended
	dx, _, err := alloc.MallocAsync[float32](ctx, st, n)
	if err != nil {
		return err
	}
	defer dx.Close(free)
	dy, _, err := alloc.MallocAsync[float32](ctx, st, n)
	if err != nil {
		return err
	}
	defer dy.Close(free)
	dout, _, err := alloc.MallocAsync[float32](ctx, st, n)
	if err != nil {
		return err
	}
	defer dout.Close(free)
	return saxpyIn(ctx, prog, d, st, a, x, y, out, dx, dy, dout)
}

// saxpyIn runs out = a*x + y on stream st of device d in the device buffers dx, dy and dout,
// which hold at least len(x) elements each.
func saxpyIn(ctx context.Context, prog *device.Program, d *device.Device, st *streams.Stream, a float32, x, y, out []float32,
	dx, dy, dout *alloc.Buffer[float32]) error {
	k, err := kernelsOn(ctx, prog, d)
	if err != nil {
		return err
	}
	n := len(x)
	cfg := cuda.LaunchConfig{Grid: cuda.Dim(uint32((n + 255) / 256)), Block: cuda.Dim(256)}
	return actor.WaitAll(ctx,
		streams.CopyToDevice(ctx, st, dx, x),
		streams.CopyToDevice(ctx, st, dy, y),
		st.Launch(ctx, k.saxpy, cfg, int32(n), a, dx, dy, dout),
		streams.CopyFromDevice(ctx, st, out, dout),
	)
}

// scratch is one request's memory: its body, x, y and the answer. Requests take one from
// scratches and give it back when they are done with it, so that a busy service does not
// leave ~100 KiB of garbage a request.
type scratch struct {
	body      []byte
	x, y, out []float32
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
