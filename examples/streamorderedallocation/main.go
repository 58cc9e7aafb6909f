// Command streamorderedallocation is NVIDIA's streamOrderedAllocation sample (cuda-samples,
// 2_Concepts_and_Techniques) done with gpuactor. A kernel adds two vectors of 1 Mi floats into
// a third; the three device vectors are allocated and freed in stream order (cudaMallocAsync,
// cudaFreeAsync, from the device's default memory pool). The program runs, as the C sample:
//
//	basicStreamOrderedAllocation:    on a new stream, allocate the three vectors, copy the
//	                                 inputs up, add, free the inputs, copy the sum back, free
//	                                 the sum, synchronize; check the sum
//	streamOrderedAllocationPostSync: set the default pool's release threshold to the maximum,
//	                                 so that the synchronization ending each iteration keeps
//	                                 the pool's memory, then the same work 20 times, each
//	                                 iteration ending with a synchronization of the stream;
//	                                 the 20 iterations are timed with two events recorded on
//	                                 the stream around them; check the sum
//
// and prints the lines the C sample prints, then PASS or FAIL. The check is the C sample's
// (the relative L2 norm of the error below 1e-6), and every element is also checked exactly.
//
//	go run ./examples/streamorderedallocation                                      # the C sample's sizes
//	go run ./examples/streamorderedallocation -backend sim -n 10007 -iterations 3  # small, for the simulator
//
// Host memory. The C sample's host vectors come from malloc: pageable memory, which
// cudaMemcpyAsync copies through the driver's own pinned staging buffers, returning to the
// host only once its part is done. gpuactor's equivalent of a pageable copy is a copy of a
// plain Go slice (streams.CopyToDevice, streams.CopyFromDevice), staged through the device's
// pool of pinned memory; so the port's host vectors are Go slices, not pinned buffers. The
// timed loop thus moves the same bytes from and to pageable memory as the C sample's, through
// different staging (see examples/compare/README.md).
//
// -compare_malloc adds what the C sample does not do: the same loop with cudaMalloc and
// cudaFree instead of the pool, timed the same way.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"time"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/examples/internal/sample"
	"github.com/gpuactor/gpuactor/streams"
)

// source is the sample's kernel: one thread an element, the last block partly idle.
const source = `
extern "C" __global__ void vectorAddGPU(const float* a, const float* b, float* c, int N) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < N) c[idx] = a[idx] + b[idx];
}
`

// simKernels is vectorAddGPU for the simulator: the same float additions.
var simKernels = map[string]cuda.SimKernel{
	"vectorAddGPU": func(c *cuda.KernelCall) error {
		n := int(c.Int32(3))
		a := cuda.SimSlice[float32](c, 0, n)
		b := cuda.SimSlice[float32](c, 1, n)
		out := cuda.SimSlice[float32](c, 2, n)
		for i := range min(uint64(n), c.Threads()) {
			out[i] = a[i] + b[i]
		}
		return nil
	},
}

// The sample's constants: elements per vector, timed iterations (MAX_ITER), block size.
const (
	nelem   = 1048576
	maxIter = 20
	threads = 256
)

// exitWaived is helper_string.h's EXIT_WAIVED: the status of a sample that cannot run here.
const exitWaived = 2

// errWaived: the device has no memory pools, and the sample does not apply.
var errWaived = errors.New("waived")

type config struct {
	n             int  // elements per vector
	iterations    int  // iterations of the timed loop (MAX_ITER)
	compareMalloc bool // also time the loop with cudaMalloc and cudaFree (not in the C sample)
	sample.Flags
	opts []device.Option // more device options (tests)
}

func main() {
	var c config
	flag.IntVar(&c.n, "n", nelem, "elements per vector")
	flag.IntVar(&c.iterations, "iterations", maxIter, "iterations of the timed loop")
	flag.BoolVar(&c.compareMalloc, "compare_malloc", false, "also time the loop with cudaMalloc/cudaFree (not in the C sample)")
	c.Register()
	flag.Parse()
	err := run(c)
	if errors.Is(err, errWaived) {
		os.Exit(exitWaived)
	}
	sample.Finish(err)
}

func run(c config) (err error) {
	if c.n <= 0 || c.iterations <= 0 {
		return errors.New("-n and -iterations must be positive")
	}
	ctx := context.Background()
	dev, err := device.Open(ctx, c.Ordinal, append(c.Options(), c.opts...)...)
	if err != nil {
		return err
	}
	defer sample.Keep(&err, dev.Close)
	p := dev.Properties()
	major, minor := p.ComputeCapability.Major, p.ComputeCapability.Minor
	fmt.Printf("GPU Device %d: \"%s\" with compute capability %d.%d\n\n", dev.Ordinal(), sample.ArchName(os.Stdout, major, minor), major, minor)
	sample.Describe(dev)
	if !p.MemoryPoolsSupported {
		fmt.Println("Waiving execution as device does not support Memory Pools")
		return errWaived
	}
	mod, err := dev.Compile(ctx, device.Source{Name: "streamorderedallocation.cu", Code: source, Sim: simKernels})
	if err != nil {
		return err
	}
	defer sample.Keep(&err, func() error { return mod.Close(ctx) })
	k, err := mod.Kernel(ctx, "vectorAddGPU")
	if err != nil {
		return err
	}

	// The host vectors, pageable as the C sample's malloc'd ones (see the package comment),
	// filled with rand() / RAND_MAX, a then b, element by element.
	a, b, out := make([]float32, c.n), make([]float32, c.n), make([]float32, c.n)
	rng := sample.NewCRand()
	for i := range a {
		a[i] = float32(rng.Next()) / float32(math.MaxInt32)
		b[i] = float32(rng.Next()) / float32(math.MaxInt32)
	}
	w := &work{k: k, a: a, b: b, out: out}

	// The C sample runs the second part even when the first fails.
	err1 := basicStreamOrderedAllocation(ctx, dev, w)
	clear(out)
	err2 := streamOrderedAllocationPostSync(ctx, dev, w, c.iterations)
	if err := errors.Join(err1, err2); err != nil {
		return err
	}
	if c.compareMalloc {
		clear(out)
		if err := mallocLoop(ctx, dev, w, c.iterations); err != nil {
			return err
		}
	}
	if u := dev.Stats().Memory; u.Async.Count != 0 || u.Device.Count != 0 {
		return fmt.Errorf("allocations left behind: %+v", u)
	}
	return nil
}

// work is what an iteration needs: the kernel and the host vectors.
type work struct {
	k         *device.Kernel
	a, b, out []float32
}

// launchConfig is the sample's launch shape: blocks of 256, as many as ceil(n / 256.0f).
func (w *work) launchConfig() cuda.LaunchConfig {
	blocks := uint32(math.Ceil(float64(float32(len(w.a)) / float32(threads))))
	return cuda.LaunchConfig{Grid: cuda.Dim(blocks), Block: cuda.Dim(threads)}
}

func basicStreamOrderedAllocation(ctx context.Context, dev *device.Device, w *work) (err error) {
	fmt.Println("Starting basicStreamOrderedAllocation()")
	s, err := streams.New(ctx, dev) // non-blocking, as cudaStreamNonBlocking
	if err != nil {
		return err
	}
	defer sample.Keep(&err, func() error { return s.Close(ctx) })
	if err := w.poolIteration(ctx, s); err != nil {
		return err
	}
	return w.check("basicStreamOrderedAllocation")
}

func streamOrderedAllocationPostSync(ctx context.Context, dev *device.Device, w *work, iterations int) (err error) {
	fmt.Println("Starting streamOrderedAllocationPostSync()")
	s, err := streams.New(ctx, dev)
	if err != nil {
		return err
	}
	defer sample.Keep(&err, func() error { return s.Close(ctx) })
	start, end, err := timingEvents(ctx, dev)
	if err != nil {
		return err
	}
	defer sample.Keep(&err, func() error { return errors.Join(start.Close(ctx), end.Close(ctx)) })

	// Keep all freed memory in the default pool across synchronizations: after the first
	// iteration, the allocations are served from the pool without going to the driver. The C
	// sample leaves the threshold set; the port puts the default back when it is done.
	pool, err := alloc.DefaultPool(ctx, dev)
	if err != nil {
		return err
	}
	if err := pool.SetReleaseThreshold(ctx, alloc.KeepAll); err != nil {
		return err
	}
	defer sample.Keep(&err, func() error { return pool.SetReleaseThreshold(ctx, 0) })

	elapsed, err := timeOnStream(ctx, s, start, end, iterations, w.poolIteration)
	if err != nil {
		return err
	}
	fmt.Printf("Total elapsed time = %f ms over %d iterations\n", ms(elapsed), iterations)
	return w.check("streamOrderedAllocationPostSync")
}

// mallocLoop is -compare_malloc: the timed loop with cudaMalloc and cudaFree.
func mallocLoop(ctx context.Context, dev *device.Device, w *work, iterations int) (err error) {
	fmt.Println("Starting the same loop with cudaMalloc/cudaFree (-compare_malloc)")
	s, err := streams.New(ctx, dev)
	if err != nil {
		return err
	}
	defer sample.Keep(&err, func() error { return s.Close(ctx) })
	start, end, err := timingEvents(ctx, dev)
	if err != nil {
		return err
	}
	defer sample.Keep(&err, func() error { return errors.Join(start.Close(ctx), end.Close(ctx)) })
	elapsed, err := timeOnStream(ctx, s, start, end, iterations, w.mallocIteration)
	if err != nil {
		return err
	}
	fmt.Printf("Total elapsed time = %f ms over %d iterations\n", ms(elapsed), iterations)
	return w.check("cudaMalloc/cudaFree loop")
}

// timingEvents makes two events that can be timed, as cudaEventCreate does.
func timingEvents(ctx context.Context, dev *device.Device) (start, end *streams.Event, err error) {
	if start, err = streams.NewEvent(ctx, dev); err != nil {
		return nil, nil, err
	}
	if end, err = streams.NewEvent(ctx, dev); err != nil {
		return nil, nil, errors.Join(err, start.Close(ctx))
	}
	return start, end, nil
}

// timeOnStream records start on s, runs iteration n times, records end on s, waits for it
// and returns the time between the two events: the GPU's clock over the whole loop, the
// host's side of every iteration included, since each iteration ends by waiting for s.
func timeOnStream(ctx context.Context, s *streams.Stream, start, end *streams.Event, n int,
	iteration func(context.Context, *streams.Stream) error) (time.Duration, error) {
	started := s.Record(ctx, start)
	for range n {
		if err := iteration(ctx, s); err != nil {
			return 0, err
		}
	}
	ended := s.Record(ctx, end)
	if err := end.Synchronize(ctx); err != nil {
		return 0, err
	}
	if err := actor.WaitAll(ctx, started, ended); err != nil {
		return 0, err
	}
	return streams.Elapsed(ctx, start, end)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// poolIteration is one iteration of the sample, in its order: allocate the three vectors in
// stream order, copy the inputs up, add, free the inputs, copy the sum back, free the sum,
// and synchronize the stream.
func (w *work) poolIteration(ctx context.Context, s *streams.Stream) error {
	var futs []actor.Waiter
	var bufs [3]*alloc.Buffer[float32]
	for i := range bufs {
		buf, f, err := alloc.MallocAsync[float32](ctx, s, len(w.a))
		if err != nil {
			return errors.Join(err, freeAll(ctx, bufs[:i]))
		}
		bufs[i] = buf
		futs = append(futs, f)
	}
	dA, dB, dC := bufs[0], bufs[1], bufs[2]
	futs = append(futs,
		streams.CopyToDevice(ctx, s, dA, w.a),
		streams.CopyToDevice(ctx, s, dB, w.b),
		s.Launch(ctx, w.k, w.launchConfig(), dA, dB, dC, int32(len(w.a))),
		dA.CloseOn(ctx, s),
		dB.CloseOn(ctx, s),
		streams.CopyFromDevice(ctx, s, w.out, dC),
		dC.CloseOn(ctx, s))
	return settle(ctx, s, futs)
}

// mallocIteration is the same with cudaMalloc and cudaFree, each of which synchronizes.
func (w *work) mallocIteration(ctx context.Context, s *streams.Stream) error {
	var bufs [3]*alloc.Buffer[float32]
	for i := range bufs {
		buf, err := alloc.Malloc[float32](ctx, s, len(w.a))
		if err != nil {
			return errors.Join(err, freeAll(ctx, bufs[:i]))
		}
		bufs[i] = buf
	}
	dA, dB, dC := bufs[0], bufs[1], bufs[2]
	futs := []actor.Waiter{
		streams.CopyToDevice(ctx, s, dA, w.a),
		streams.CopyToDevice(ctx, s, dB, w.b),
		s.Launch(ctx, w.k, w.launchConfig(), dA, dB, dC, int32(len(w.a))),
	}
	if err := errors.Join(dA.Close(ctx), dB.Close(ctx)); err != nil {
		return err
	}
	futs = append(futs, streams.CopyFromDevice(ctx, s, w.out, dC))
	if err := dC.Close(ctx); err != nil {
		return err
	}
	return settle(ctx, s, futs)
}

// settle synchronizes the stream, as the C sample does at the end of an iteration, then
// collects the operations' errors. The download's future also covers the copy from staging
// into the Go slice, which the C sample's pageable cudaMemcpyAsync has done before it
// returns.
func settle(ctx context.Context, s *streams.Stream, futs []actor.Waiter) error {
	if err := s.Synchronize(ctx); err != nil {
		return err
	}
	return actor.WaitAll(ctx, futs...)
}

func freeAll(ctx context.Context, bufs []*alloc.Buffer[float32]) error {
	var errs []error
	for _, b := range bufs {
		errs = append(errs, b.Close(ctx))
	}
	return errors.Join(errs...)
}

// check is the C sample's check, which prints "<name> PASSED" when the relative L2 norm of
// the error is below 1e-6; the port also requires every element to be exactly a + b, as
// IEEE float addition makes it on any GPU.
func (w *work) check(name string) error {
	fmt.Println("> Checking the results from vectorAddGPU() ...")
	rel := relativeError(w.a, w.b, w.out)
	if !(rel < 1e-6) {
		return fmt.Errorf("%s: relative error %g is not below 1e-6", name, rel)
	}
	fmt.Printf("%s PASSED\n", name)
	for i, c := range w.out {
		if want := w.a[i] + w.b[i]; c != want {
			return fmt.Errorf("%s: element %d is %v, want %v", name, i, c, want)
		}
	}
	return nil
}

// relativeError is ‖c − (a + b)‖ / ‖a + b‖, accumulated in float as the C sample does (the
// conversions keep Go from fusing the multiply-adds).
func relativeError(a, b, c []float32) float32 {
	var errorNorm, refNorm float32
	for i := range c {
		ref := a[i] + b[i]
		diff := c[i] - ref
		errorNorm += float32(diff * diff)
		refNorm += float32(ref * ref)
	}
	errorNorm = float32(math.Sqrt(float64(errorNorm)))
	refNorm = float32(math.Sqrt(float64(refNorm)))
	return errorNorm / refNorm
}
