package sim

import (
	"math"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// gate is a channel a test kernel blocks on; release is idempotent and runs at cleanup, so a
// failing test never leaves a stream goroutine blocked.
type gate struct {
	ch   chan struct{}
	once sync.Once
}

func newGate(t *testing.T) *gate {
	g := &gate{ch: make(chan struct{})}
	t.Cleanup(g.release)
	return g
}

func (g *gate) release() { g.once.Do(func() { close(g.ch) }) }

// open returns a fresh backend and its first two devices.
func open(t *testing.T, opts ...Option) (*Backend, backend.Device, backend.Device) {
	t.Helper()
	b := New(opts...)
	d0, err := b.Open(0)
	require.NoError(t, err)
	d1, err := b.Open(1)
	require.NoError(t, err)
	return b, d0, d1
}

// observed returns a logger option and the log entries it collects.
func observed() (Option, *observer.ObservedLogs) {
	core, logs := observer.New(zap.DebugLevel)
	return WithLogger(zap.New(core)), logs
}

func mkStream(t *testing.T, d backend.Device) backend.Stream {
	t.Helper()
	s, err := d.StreamCreate(backend.StreamNonBlocking, 0)
	require.NoError(t, err)
	t.Cleanup(func() { _ = d.StreamDestroy(s) })
	return s
}

func malloc(t *testing.T, d backend.Device, n uint64) backend.DevicePtr {
	t.Helper()
	p, err := d.Malloc(n)
	require.NoError(t, err)
	return p
}

// kernels loads fns as one module on d and returns their handles by name.
func kernels(t *testing.T, d backend.Device, fns map[string]backend.SimKernel) map[string]backend.Kernel {
	t.Helper()
	m, err := d.LoadModule(backend.ModuleSpec{SimKernels: fns})
	require.NoError(t, err)
	out := map[string]backend.Kernel{}
	for name := range fns {
		k, err := d.ModuleKernel(m, name)
		require.NoError(t, err)
		out[name] = k
	}
	return out
}

func launch(t *testing.T, d backend.Device, k backend.Kernel, s backend.Stream, args ...backend.Arg) {
	t.Helper()
	require.NoError(t, d.Launch(k, backend.Dim3{X: 1, Y: 1, Z: 1}, backend.Dim3{X: 32, Y: 1, Z: 1}, 0, s, args))
}

func ptrArg(p backend.DevicePtr) backend.Arg {
	return backend.Arg{Kind: backend.ArgPtr, Bits: uint64(p)}
}
func u64Arg(v uint64) backend.Arg { return backend.Arg{Kind: backend.ArgUint64, Bits: v} }
func f64Arg(v float64) backend.Arg {
	return backend.Arg{Kind: backend.ArgFloat64, Bits: math.Float64bits(v)}
}

// fillKernel sets arg 1 float64s at arg 0 to arg 2.
func fillKernel(c *backend.KernelCall) error {
	xs := cuda.SimSlice[float64](c, 0, int(c.Uint64(1)))
	for i := range xs {
		xs[i] = c.Float64(2)
	}
	return nil
}

// gatedFill waits for g, then fills like fillKernel.
func gatedFill(g *gate) backend.SimKernel {
	return func(c *backend.KernelCall) error {
		<-g.ch
		return fillKernel(c)
	}
}

func hostPtr[T any](xs []T) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(xs)) }

func bytesOf(xs []float64) uint64 { return uint64(len(xs)) * 8 }

// readFloats copies n float64s from p to a fresh slice (pageable: returns once copied).
func readFloats(t *testing.T, d backend.Device, p backend.DevicePtr, n int, s backend.Stream) []float64 {
	t.Helper()
	out := make([]float64, n)
	require.NoError(t, d.CopyDtoH(hostPtr(out), p, uint64(n)*8, s))
	return out
}

func requireCode(t *testing.T, err error, code cudaerr.Code, msgAndArgs ...any) {
	t.Helper()
	require.Error(t, err, msgAndArgs...)
	require.ErrorIs(t, err, code, msgAndArgs...)
}

// finishes runs f in a goroutine and reports whether it returned within d.
func finishes(d time.Duration, f func()) bool {
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}
