// Command cublas multiplies two matrices with cuBLAS on buffers and a stream of gpuactor: it
// loads libcublas itself (purego, no cgo), points a cuBLAS handle at a gpuactor stream's raw
// cudaStream_t (cublasSetStream), runs cublasSgemm on gpuactor buffers' device pointers,
// waits for the product through the gpuactor stream (Synchronize covers work other libraries
// queued on it), copies it back and checks it against a Go sgemm. It prints PASS or FAIL, or
// a SKIP line, exiting 0, where there is no GPU (the simulator has no cuBLAS) or no libcublas.
//
//	go run ./examples/cublas -n 512
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/examples/internal/sample"
	"github.com/gpuactor/gpuactor/internal/cudart"
	"github.com/gpuactor/gpuactor/streams"
)

// skipped is why the example did not run: not a failure.
type skipped struct{ why string }

func (s skipped) Error() string { return s.why }

func main() {
	n := flag.Int("n", 512, "matrix size (n×n)")
	var f sample.Flags
	f.Register()
	flag.Parse()
	err := run(*n, f)
	var s skipped
	if errors.As(err, &s) {
		fmt.Println("SKIP:", s.why)
		os.Exit(0)
	}
	sample.Finish(err)
}

func run(n int, f sample.Flags) (err error) {
	if n <= 0 {
		return fmt.Errorf("-n must be positive")
	}
	ctx := context.Background()
	dev, err := device.Open(ctx, f.Ordinal, f.Options()...)
	if err != nil {
		return err
	}
	defer sample.Keep(&err, dev.Close)
	sample.Describe(dev)
	if dev.Backend() != device.BackendCUDA {
		return skipped{fmt.Sprintf("cuBLAS needs a GPU: device %d runs on the %s backend", dev.Ordinal(), dev.Backend())}
	}
	lib, err := loadCublas()
	if err != nil {
		return skipped{fmt.Sprintf("no libcublas: %v", err)}
	}
	fmt.Printf("cuBLAS: %s\n", lib.file)

	// Row-major A (n×n) and B, random in [-1, 1).
	rng := rand.New(rand.NewPCG(1, 2))
	a, b := make([]float32, n*n), make([]float32, n*n)
	for i := range a {
		a[i], b[i] = rng.Float32()*2-1, rng.Float32()*2-1
	}
	s, err := streams.New(ctx, dev)
	if err != nil {
		return err
	}
	defer sample.Keep(&err, func() error { return s.Close(ctx) })
	bytes := uint64(4 * n * n)
	var bufs [3]*device.Buffer
	for i := range bufs {
		if bufs[i], err = dev.MallocBytes(ctx, bytes); err != nil {
			return err
		}
	}
	da, db, dc := bufs[0], bufs[1], bufs[2]
	if err := streams.CopyToDevice(ctx, s, da, a).Wait(ctx); err != nil {
		return err
	}
	if err := streams.CopyToDevice(ctx, s, db, b).Wait(ctx); err != nil {
		return err
	}

	h, err := lib.create()
	if err != nil {
		return err
	}
	defer sample.Keep(&err, func() error { return lib.destroy(h) })
	// cuBLAS queues its kernels on the gpuactor stream from here on: they run after the
	// uploads above and before whatever gpuactor queues next on s.
	if err := lib.setStream(h, s.Handle()); err != nil {
		return err
	}
	var ptrs [3]uintptr
	for i, buf := range bufs {
		p, err := buf.DevicePtr(ctx)
		if err != nil {
			return err
		}
		ptrs[i] = uintptr(p)
	}
	// cuBLAS is column-major: row-major C = A·B is column-major Cᵀ = Bᵀ·Aᵀ, so pass B first.
	if err := lib.sgemm(h, n, 1, ptrs[1], ptrs[0], 0, ptrs[2]); err != nil {
		return err
	}
	// gpuactor's futures do not track cuBLAS's kernels; Synchronize waits for everything on
	// the stream, theirs included.
	if err := s.Synchronize(ctx); err != nil {
		return err
	}
	c := make([]float32, n*n)
	if err := streams.CopyFromDevice(ctx, s, c, dc).Wait(ctx); err != nil {
		return err
	}

	want := sgemm(n, a, b)
	worst := 0.0
	for i := range c {
		d := math.Abs(float64(c[i] - want[i]))
		worst = max(worst, d)
		if d > 1e-3*math.Sqrt(float64(n)) {
			return fmt.Errorf("element [%d][%d] of C = A·B is %g, want %g", i/n, i%n, c[i], want[i])
		}
	}
	fmt.Printf("C = A·B for %d×%d float32 matrices: largest difference from the Go sgemm %.2g\n", n, n, worst)
	return nil
}

// sgemm is the Go reference: row-major C = A·B.
func sgemm(n int, a, b []float32) []float32 {
	c := make([]float32, n*n)
	for i := range n {
		row := c[i*n : (i+1)*n]
		for k := range n {
			aik := a[i*n+k]
			for j, bkj := range b[k*n : (k+1)*n] {
				row[j] += aik * bkj
			}
		}
	}
	return c
}

// cublas is the few cuBLAS v2 entry points the example binds.
type cublas struct {
	file                                   string
	createFn, destroyFn, setStreamFn, gemm uintptr
}

func loadCublas() (*cublas, error) {
	names := []string{"libcublas.so.13", "libcublas.so.12", "libcublas.so.11", "libcublas.so"}
	if runtime.GOOS == "windows" {
		names = []string{"cublas64_13.dll", "cublas64_12.dll", "cublas64_11.dll"}
	}
	h, file, err := cudart.LoadLibrary("libcublas", "GPUACTOR_CUBLAS",
		[]string{"nvidia/cu13/lib", "nvidia/cublas/lib"}, names)
	if err != nil {
		return nil, err
	}
	l := &cublas{file: file}
	for sym, dst := range map[string]*uintptr{
		"cublasCreate_v2": &l.createFn, "cublasDestroy_v2": &l.destroyFn,
		"cublasSetStream_v2": &l.setStreamFn, "cublasSgemm_v2": &l.gemm,
	} {
		if *dst, err = cudart.Symbol(h, sym); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
	}
	return l, nil
}

// status turns a cublasStatus_t into an error.
func status(call string, r uintptr) error {
	if code := int32(r); code != 0 {
		return fmt.Errorf("%s: cublasStatus_t %d", call, code)
	}
	return nil
}

func (l *cublas) create() (uintptr, error) {
	var h uintptr
	r, _, _ := purego.SyscallN(l.createFn, uintptr(unsafe.Pointer(&h)))
	return h, status("cublasCreate_v2", r)
}

func (l *cublas) destroy(h uintptr) error {
	r, _, _ := purego.SyscallN(l.destroyFn, h)
	return status("cublasDestroy_v2", r)
}

func (l *cublas) setStream(h, stream uintptr) error {
	r, _, _ := purego.SyscallN(l.setStreamFn, h, stream)
	return status("cublasSetStream_v2", r)
}

// sgemm queues column-major C = alpha·A·B + beta·C for n×n matrices (no transposes). The
// scalars travel by pointer, in host memory (CUBLAS_POINTER_MODE_HOST): cuBLAS reads them
// before the call returns, so pinning them for the call is enough.
func (l *cublas) sgemm(h uintptr, n int, alpha float32, a, b uintptr, beta float32, c uintptr) error {
	const opN = 0 // CUBLAS_OP_N
	scalars := &[2]float32{alpha, beta}
	var pin runtime.Pinner
	pin.Pin(scalars)
	defer pin.Unpin()
	r, _, _ := purego.SyscallN(l.gemm, h, opN, opN, uintptr(n), uintptr(n), uintptr(n),
		uintptr(unsafe.Pointer(&scalars[0])), a, uintptr(n), b, uintptr(n),
		uintptr(unsafe.Pointer(&scalars[1])), c, uintptr(n))
	return status("cublasSgemm_v2", r)
}
