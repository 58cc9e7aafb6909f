// Command graphmemorynodes is NVIDIA's graphMemoryNodes sample (cuda-samples,
// 3_CUDA_Features) done with gpuactor. It computes negSquare[i] = -(input[i]²) over 8,000,000
// random floats six times, each time through device memory that lives only as long as the
// work needs it, and checks each result:
//
//  1. in a stream: stream-ordered allocations and frees (alloc.MallocAsync, CloseOn), with a
//     second stream that copies the squares back and frees them, joined through events;
//  2. in a graph captured from that same stream work (global capture mode), so that the
//     allocations and frees become the graph's memory nodes;
//  3. in a graph built node by node with allocation and free nodes (graphs.AddAlloc,
//     AddFree), printing whether the allocation made after d_input's free reuses its virtual
//     address;
//  4. in such a graph that leaves its output unfreed: a kernel checks the output on the GPU
//     after the graph has run, and the output is freed once the stream has synchronized;
//  5. the same graph launched again, checked on the GPU and freed in stream order;
//  6. the same graph launched again, checked on the GPU and freed by a second graph made of
//     one free node.
//
// It prints the C sample's lines and ends with PASS, or FAIL when a check failed.
//
//	go run ./examples/graphmemorynodes                        # the C sample's 8,000,000 floats
//	go run ./examples/graphmemorynodes -backend sim -n 10007  # a size the simulator runs quickly
//
// Differences from the C sample, and why:
//
//   - Host arrays. The C sample's are malloc'd pageable memory. gpuactor's copies, captured or
//     not, take pinned memory (a device.HostBuffer), and the explicit graph reaches the host
//     arrays from kernels (next point), so the port allocates them pinned and mapped
//     (cudaHostAlloc with cudaHostAllocMapped).
//   - The explicit graph's copies. Its three cudaGraphAddMemcpyNode1D nodes copy between the
//     host arrays and the graph's own allocations. gpuactor's copy nodes (AddCopyToDevice,
//     AddCopyFromDevice) take a device.Mem, and the address AddAlloc returns is only a
//     cuda.DevicePtr, so each copy node is a kernel node instead (copyArray) that reads or
//     writes the mapped host array through its device address. The graph has the C graph's
//     nodes and dependencies, node for node; the copies run on the SMs, not a copy engine.
//   - Freeing the graph's output outside a graph. gpuactor can free a graph allocation only
//     with a free node: it has no cudaFree nor cudaFreeAsync of a bare address. Where the C
//     sample calls cudaFree after cudaStreamSynchronize (variant 4), the port launches a graph
//     of one free node and waits for it; where it calls cudaFreeAsync on the stream (variant
//     5), the port launches that graph on the stream. Variant 6 builds its free graph as the
//     C sample does.
//   - validateGPU. The C kernel takes the reference arrays as a struct by value; gpuactor's
//     kernel arguments are scalars and pointers, so the port's kernel takes the reference
//     array and the element count as two arguments.
//   - The second stream and the events of variants 1 and 2 are made before the work is queued
//     (before the capture begins) and closed after the stream has synchronized (after the
//     capture ends): closing a gpuactor stream waits for its work, which a capture forbids.
//     The C sample creates and destroys them inside, which changes nothing it prints.
//   - Device selection. Without -device the C sample picks the GPU of most GFLOPS; the port
//     runs on device 0 unless -device says otherwise.
//   - Exit status. The C sample prints "Validation FAILURE!" and goes on, and exits 0 anyway;
//     the port goes on too, and ends with FAIL and status 1. Variants 5 and 6 also check the
//     host's copy of the result (silently: the C sample checks only the GPU's there).
//
// On the simulator, graph allocations never share a virtual address, so the line "Check
// verified that d_negSquare and d_input share a virtual address." is not printed; a GPU
// prints it in variants 3 and 4. The simulator also makes a stream-ordered allocation
// queued during a capture an ordinary pool allocation rather than an allocation node; on the
// simulator only, the port keeps the pool's freed memory reserved so that the captured graph
// of variant 2 can still use it (keepPoolMemory).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/examples/internal/sample"
	"github.com/gpuactor/gpuactor/graphs"
	"github.com/gpuactor/gpuactor/streams"
)

// The sample's constants: the block size, the relative error a result may have, and the
// number of elements.
const (
	threadsPerBlock   = 512
	allowableVariance = float32(1e-6)
	numElements       = 8000000
)

// exitWaived is the status the C samples exit with when they cannot run (EXIT_WAIVED).
const exitWaived = 2

// errWaived: the device cannot run the sample; it has said why.
var errWaived = errors.New("waived")

// source holds the C sample's kernels, validateGPU with its reference as two arguments (see
// the package comment), and copyArray, which stands for the explicit graph's copy nodes.
const source = `
extern "C" __global__ void squareArray(const float* input, float* output, int numElements) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < numElements) output[idx] = input[idx] * input[idx];
}
extern "C" __global__ void negateArray(const float* input, float* output, int numElements) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < numElements) output[idx] = input[idx] * -1;
}
extern "C" __global__ void validateGPU(const float* d_negSquare, const float* refNegSquare, int numElements,
                                       bool* foundValidationFailure) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < numElements) {
        float ref = refNegSquare[idx];
        float diff = d_negSquare[idx] - ref;
        diff *= diff;
        ref *= ref;
        if (diff / ref > 1.e-6f) *foundValidationFailure = true;
    }
}
extern "C" __global__ void copyArray(const float* src, float* dst, int numElements) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < numElements) dst[idx] = src[idx];
}
`

// simKernels are the kernels for the simulator, in the same float32 arithmetic. Simulated
// kernels see only device memory, so those that touch the mapped host arrays find them
// through views.
func simKernels(views *sample.HostViews[float32]) map[string]cuda.SimKernel {
	return map[string]cuda.SimKernel{
		"squareArray": func(c *cuda.KernelCall) error {
			n := simCount(c, 2)
			in, out := cuda.SimSlice[float32](c, 0, n), cuda.SimSlice[float32](c, 1, n)
			for i := range out {
				out[i] = in[i] * in[i]
			}
			return nil
		},
		"negateArray": func(c *cuda.KernelCall) error {
			n := simCount(c, 2)
			in, out := cuda.SimSlice[float32](c, 0, n), cuda.SimSlice[float32](c, 1, n)
			for i := range out {
				out[i] = in[i] * -1
			}
			return nil
		},
		"validateGPU": func(c *cuda.KernelCall) error {
			n := simCount(c, 2)
			got, refs := cuda.SimSlice[float32](c, 0, n), cuda.SimSlice[float32](c, 1, n)
			for i := range got {
				if !withinVariance(got[i], refs[i]) {
					cuda.SimSlice[uint8](c, 3, 1)[0] = 1
				}
			}
			return nil
		},
		"copyArray": func(c *cuda.KernelCall) error {
			n := simCount(c, 2)
			copy(views.Slice(c, 1, n), views.Slice(c, 0, n))
			return nil
		},
	}
}

// simCount is the elements a simulated launch covers: the count in argument i, or fewer when
// the grid has fewer threads (the C sample's block count can fall short; see blocks).
func simCount(c *cuda.KernelCall, i int) int {
	return int(min(uint64(max(c.Int32(i), 0)), c.Threads()))
}

// withinVariance is the sample's check of one element: its squared difference from ref,
// relative to ref², is at most 1e-6, in float arithmetic (a NaN, from ref 0, passes, as in C).
func withinVariance(got, ref float32) bool {
	diff := got - ref
	diff *= diff
	ref *= ref
	return !(diff/ref > allowableVariance)
}

type config struct {
	n         int  // elements (the C sample's NUM_ELEMENTS)
	deviceSet bool // -device was given (the C sample then prints gpuDeviceInit's line)
	sample.Flags
	opts []device.Option // more device options (tests)
}

func main() {
	var c config
	flag.IntVar(&c.n, "n", numElements, "floats in each array")
	c.Register()
	flag.Parse()
	flag.Visit(func(f *flag.Flag) { c.deviceSet = c.deviceSet || f.Name == "device" })
	err := run(c)
	if errors.Is(err, errWaived) {
		os.Exit(exitWaived)
	}
	sample.Finish(err)
}

// hostArrays are the C sample's negSquareArrays on the host: the input and the two outputs,
// pinned and mapped, with their device addresses.
type hostArrays struct {
	input, square, negSquare    *alloc.Pinned[float32]
	dInput, dSquare, dNegSquare cuda.DevicePtr // the addresses kernels reach them at
	numElements                 int
	bytes                       uint64
	numBlocks                   uint32
}

// env is what every variant uses.
type env struct {
	ctx                                  context.Context
	dev                                  *device.Device
	s                                    *streams.Stream // the C sample's stream
	square, negate, validate, copyKernel *device.Kernel
	host                                 hostArrays
	refNegSquare                         *device.Buffer        // the reference result on the GPU
	foundValidationFailure               *alloc.Managed[uint8] // the C sample's managed bool
	failed                               []string              // the variants whose checks failed
	cleanups                             closers               // what the sample releases at its end
}

// closers are releases to run at the end, last added first.
type closers []func() error

func (c *closers) add(release func() error) { *c = append(*c, release) }

// close runs every release, last added first, and forgets them; it returns their errors.
func (c *closers) close() error {
	var errs []error
	for i := len(*c) - 1; i >= 0; i-- {
		errs = append(errs, (*c)[i]())
	}
	*c = nil
	return errors.Join(errs...)
}

func run(c config) (err error) {
	if c.n <= 0 {
		return errors.New("-n must be positive")
	}
	ctx := context.Background()
	dev, err := device.Open(ctx, c.Ordinal, append(c.Options(), c.opts...)...)
	if err != nil {
		return err
	}
	defer sample.Keep(&err, dev.Close)
	p := dev.Properties()
	major, minor := p.ComputeCapability.Major, p.ComputeCapability.Minor
	if c.deviceSet {
		fmt.Printf("gpuDeviceInit() CUDA Device [%d]: \"%s\n", dev.Ordinal(), sample.ArchName(os.Stdout, major, minor))
	} else {
		fmt.Printf("GPU Device %d: \"%s\" with compute capability %d.%d\n\n", dev.Ordinal(), sample.ArchName(os.Stdout, major, minor), major, minor)
	}
	sample.Describe(dev)

	fmt.Printf("Driver version is: %d.%d\n", p.DriverVersion/1000, (p.DriverVersion%100)/10)
	if p.DriverVersion < 11040 {
		fmt.Println("Waiving execution as driver does not support Graph Memory Nodes")
		return errWaived
	}
	if !p.MemoryPoolsSupported {
		fmt.Println("Waiving execution as device does not support Memory Pools")
		return errWaived
	}
	fmt.Println("Setting up sample.")

	e := &env{ctx: ctx, dev: dev}
	defer sample.Keep(&err, e.cleanups.close) // on early returns; a no-op after the one below
	views := &sample.HostViews[float32]{}
	mod, err := dev.Compile(ctx, device.Source{Name: "graphmemorynodes.cu", Code: source, Sim: simKernels(views)})
	if err != nil {
		return err
	}
	e.cleanups.add(func() error { return mod.Close(ctx) })
	for _, k := range []struct {
		k    **device.Kernel
		name string
	}{{&e.square, "squareArray"}, {&e.negate, "negateArray"}, {&e.validate, "validateGPU"}, {&e.copyKernel, "copyArray"}} {
		if *k.k, err = mod.Kernel(ctx, k.name); err != nil {
			return err
		}
	}
	e.cleanups.add(e.freeHostArrays)
	if err := e.prepareHostArrays(c.n, views); err != nil {
		return err
	}
	e.cleanups.add(e.freeRefArrays)
	if err := e.prepareRefArrays(); err != nil {
		return err
	}
	if e.s, err = streams.New(ctx, dev); err != nil { // non-blocking, as cudaStreamNonBlocking
		return err
	}
	e.cleanups.add(func() error { return e.s.Close(ctx) })
	if dev.Backend() == device.BackendSim {
		if err := keepPoolMemory(ctx, dev); err != nil {
			return err
		}
	}
	fmt.Print("Setup complete.\n\n")

	if err := e.run(); err != nil {
		return err
	}
	fmt.Println("Cleaning up sample.")
	if err := e.cleanups.close(); err != nil {
		return err
	}
	fmt.Println("Cleanup complete. Exiting sample.")
	if len(e.failed) > 0 {
		return fmt.Errorf("validation failed: %s", strings.Join(e.failed, "; "))
	}
	return nil
}

// keepPoolMemory works around a gap of the simulator: it makes a cudaMallocAsync queued
// during a capture an ordinary allocation from the pool, not an allocation node, and the
// captured free gives the memory back to the pool at once, so the captured graph works in
// memory of the pool's. With the pool's release threshold at KeepAll the pool keeps that
// memory reserved (and addressable) across synchronizations; nothing else allocates from
// the pool after the capture. Only on the simulator: a GPU makes allocation nodes.
func keepPoolMemory(ctx context.Context, dev *device.Device) error {
	pool, err := alloc.DefaultPool(ctx, dev)
	if err != nil {
		return err
	}
	return pool.SetReleaseThreshold(ctx, alloc.KeepAll)
}

// run runs the six variants, as the C sample's main does after its setup.
func (e *env) run() error {
	ctx, s := e.ctx, e.s

	fmt.Println("Running negateSquares in a stream.")
	side, err := e.newSideStream()
	if err != nil {
		return err
	}
	ops, err := e.negateSquaresInStream(s, side)
	if err != nil {
		return errors.Join(err, side.close(ctx))
	}
	if err := errors.Join(e.synchronize(ops...), side.close(ctx)); err != nil {
		return err
	}
	fmt.Println("Validating negateSquares in a stream...")
	e.validateHost()
	e.checkValidationFailure("in a stream")
	e.resetOutputArrays()

	fmt.Println("Running negateSquares in a stream-captured graph.")
	x, err := e.negateSquaresGraphWithStreamCapture()
	if err != nil {
		return err
	}
	if err := e.synchronize(x.Launch(ctx, s)); err != nil {
		return err
	}
	fmt.Println("Validating negateSquares in a stream-captured graph...")
	e.validateHost()
	e.checkValidationFailure("in a stream-captured graph")
	e.resetOutputArrays()
	if err := x.Close(ctx); err != nil {
		return err
	}

	fmt.Println("Running negateSquares in an explicitly constructed graph.")
	if x, _, err = e.negateSquaresGraphExplicitly(false); err != nil {
		return err
	}
	if err := e.synchronize(x.Launch(ctx, s)); err != nil {
		return err
	}
	fmt.Println("Validating negateSquares in an explicitly constructed graph...")
	e.validateHost()
	e.checkValidationFailure("in an explicitly constructed graph")
	e.resetOutputArrays()
	if err := x.Close(ctx); err != nil {
		return err
	}

	// The last three variants free d_negSquare outside the graph that allocates it, and check
	// it on the GPU before it is freed.
	fmt.Println("Running negateSquares with d_negSquare freed outside the stream.")
	x, dNegSquare, err := e.negateSquaresGraphExplicitly(true)
	if err != nil {
		return err
	}
	e.cleanups.add(func() error { return x.Close(ctx) })
	if err := e.synchronize(x.Launch(ctx, s), e.validateGPU(dNegSquare)); err != nil {
		return err
	}
	// cudaFree(d_negSquare), now that the stream has synchronized: a graph of one free node,
	// launched and waited for (see the package comment).
	free, err := e.freeGraph(dNegSquare)
	if err != nil {
		return err
	}
	e.cleanups.add(func() error { return free.Close(ctx) })
	if err := free.Launch(ctx, s).Wait(ctx); err != nil {
		return err
	}
	fmt.Println("Validating negateSquares with d_negSquare freed outside the stream...")
	e.validateHost()
	e.checkValidationFailure("with d_negSquare freed outside the stream")
	e.resetOutputArrays()

	fmt.Println("Running negateSquares with d_negSquare freed outside the graph.")
	// cudaFreeAsync(d_negSquare, stream): the same free graph, launched on the stream.
	if err := e.synchronize(x.Launch(ctx, s), e.validateGPU(dNegSquare), free.Launch(ctx, s)); err != nil {
		return err
	}
	fmt.Println("Validating negateSquares with d_negSquare freed outside the graph...")
	e.checkValidationFailure("with d_negSquare freed outside the graph")
	e.checkHostSilently("with d_negSquare freed outside the graph")
	e.resetOutputArrays()

	fmt.Println("Running negateSquares with d_negSquare freed in a different graph.")
	freeC, err := e.freeGraph(dNegSquare)
	if err != nil {
		return err
	}
	e.cleanups.add(func() error { return freeC.Close(ctx) })
	if err := e.synchronize(x.Launch(ctx, s), e.validateGPU(dNegSquare), freeC.Launch(ctx, s)); err != nil {
		return err
	}
	fmt.Println("Validating negateSquares with d_negSquare freed in a different graph...")
	e.checkValidationFailure("with d_negSquare freed in a different graph")
	e.checkHostSilently("with d_negSquare freed in a different graph")
	return nil
}

// synchronize waits for ops and then for the stream (cudaStreamSynchronize), and returns the
// first error of either.
func (e *env) synchronize(ops ...actor.Waiter) error {
	return errors.Join(actor.WaitAll(e.ctx, ops...), e.s.Synchronize(e.ctx))
}

// blocks is the C sample's block count, which rounds numElements / 512 up when the quotient,
// not the remainder, is not a multiple of 512: 15,626 blocks for 8,000,000 floats. (For some
// sizes that leaves the last elements uncovered, and the checks fail, as in C.)
func blocks(numElements int) uint32 {
	n := uint32(numElements / threadsPerBlock)
	if n%threadsPerBlock != 0 {
		n++
	}
	return n
}

func (e *env) cfg() cuda.LaunchConfig {
	return cuda.LaunchConfig{Grid: cuda.Dim(e.host.numBlocks), Block: cuda.Dim(threadsPerBlock)}
}

// fillRandomly fills xs with rand() / RAND_MAX: floats in [0, 1]. (The C sample seeds rand
// with the time; Go's generator is seeded at random.)
func fillRandomly(xs []float32) {
	for i := range xs {
		xs[i] = float32(rand.Int32()) / float32(math.MaxInt32)
	}
}

func (e *env) resetOutputArrays() {
	fillRandomly(e.host.square.Host())
	fillRandomly(e.host.negSquare.Host())
}

// prepareHostArrays allocates the host arrays, pinned and mapped, and fills all three at
// random.
func (e *env) prepareHostArrays(n int, views *sample.HostViews[float32]) error {
	h := &e.host
	h.numElements, h.bytes, h.numBlocks = n, uint64(4*n), blocks(n)
	for _, a := range []struct {
		p **alloc.Pinned[float32]
		d *cuda.DevicePtr
	}{{&h.input, &h.dInput}, {&h.square, &h.dSquare}, {&h.negSquare, &h.dNegSquare}} {
		var err error
		if *a.p, err = alloc.MallocPinned[float32](e.ctx, e.dev, n, alloc.Mapped); err != nil {
			return err
		}
		if *a.d, err = (*a.p).DevicePtr(e.ctx); err != nil {
			return err
		}
		views.Add(*a.d, (*a.p).Host())
		fillRandomly((*a.p).Host())
	}
	return nil
}

func (e *env) freeHostArrays() error {
	var errs []error
	for _, p := range []*alloc.Pinned[float32]{e.host.input, e.host.square, e.host.negSquare} {
		if p != nil {
			errs = append(errs, p.Close(e.ctx))
		}
	}
	return errors.Join(errs...)
}

// prepareRefArrays computes the expected squares and negated squares into the host's output
// arrays, copies the negated squares to the GPU for validateGPU, and allocates the managed
// flag the checks raise.
func (e *env) prepareRefArrays() error {
	in, sq, neg := e.host.input.Host(), e.host.square.Host(), e.host.negSquare.Host()
	for i := range in {
		sq[i] = in[i] * in[i]
		neg[i] = sq[i] * -1
	}
	var err error
	if e.refNegSquare, err = e.dev.MallocBytes(e.ctx, e.host.bytes); err != nil {
		return err
	}
	// cudaMemcpy: queued on the device's own stream and waited for.
	if err := streams.Default(e.dev).CopyHostToDevice(e.ctx, e.refNegSquare, e.host.negSquare.HostBuffer).Wait(e.ctx); err != nil {
		return err
	}
	if e.foundValidationFailure, err = alloc.MallocManaged[uint8](e.ctx, e.dev, 1); err != nil {
		return err
	}
	e.foundValidationFailure.Host()[0] = 0 // false (the C sample counts on the runtime's zeroes)
	return nil
}

func (e *env) freeRefArrays() error {
	var errs []error
	if e.foundValidationFailure != nil {
		errs = append(errs, e.foundValidationFailure.Close(e.ctx))
	}
	if e.refNegSquare != nil {
		errs = append(errs, e.refNegSquare.Close(e.ctx))
	}
	return errors.Join(errs...)
}

// sideStream is the second stream of the stream variant, and its three events.
type sideStream struct {
	s                                          *streams.Stream
	squareKernelComplete, negateKernelComplete *streams.Event
	squareFree                                 *streams.Event
}

func (e *env) newSideStream() (*sideStream, error) {
	side := &sideStream{}
	var err error
	if side.s, err = streams.New(e.ctx, e.dev); err != nil { // non-blocking
		return nil, err
	}
	for _, ev := range []**streams.Event{&side.squareKernelComplete, &side.negateKernelComplete, &side.squareFree} {
		if *ev, err = streams.NewEvent(e.ctx, e.dev); err != nil {
			return nil, errors.Join(err, side.close(e.ctx))
		}
	}
	return side, nil
}

func (side *sideStream) close(ctx context.Context) error {
	errs := []error{side.s.Close(ctx)}
	for _, ev := range []*streams.Event{side.squareKernelComplete, side.negateKernelComplete, side.squareFree} {
		if ev != nil {
			errs = append(errs, ev.Close(ctx))
		}
	}
	return errors.Join(errs...)
}

// negateSquaresInStream queues the C sample's doNegateSquaresInStream on s1, with side's
// stream as its stream2, and returns the futures of what it queued:
//
//	s1: alloc d_input, alloc d_square, copy the input up, squareArray, record squareKernelComplete
//	s2:   wait squareKernelComplete, copy d_square down
//	s1: free d_input, alloc d_negSquare, negateArray, record negateKernelComplete,
//	    copy d_negSquare down, free d_negSquare
//	s2:   wait negateKernelComplete, free d_square, record squareFree
//	s1: wait squareFree
func (e *env) negateSquaresInStream(s1 *streams.Stream, side *sideStream) ([]actor.Waiter, error) {
	ctx, s2, n := e.ctx, side.s, e.host.numElements
	var ops []actor.Waiter
	// The runtime gives out the addresses at once: both allocations go on s1.
	dInput, made, err := alloc.MallocAsync[float32](ctx, s1, n)
	if err != nil {
		return ops, err
	}
	ops = append(ops, made)
	dSquare, made, err := alloc.MallocAsync[float32](ctx, s1, n)
	if err != nil {
		return ops, err
	}
	ops = append(ops, made,
		s1.CopyHostToDevice(ctx, dInput, e.host.input.HostBuffer),
		s1.Launch(ctx, e.square, e.cfg(), dInput, dSquare, int32(n)),
		s1.Record(ctx, side.squareKernelComplete),
		s2.Wait(ctx, side.squareKernelComplete),
		s2.CopyDeviceToHost(ctx, e.host.square.HostBuffer, dSquare),
		dInput.CloseOn(ctx, s1))
	dNegSquare, made, err := alloc.MallocAsync[float32](ctx, s1, n)
	if err != nil {
		return ops, err
	}
	ops = append(ops, made,
		s1.Launch(ctx, e.negate, e.cfg(), dSquare, dNegSquare, int32(n)),
		s1.Record(ctx, side.negateKernelComplete),
		s1.CopyDeviceToHost(ctx, e.host.negSquare.HostBuffer, dNegSquare),
		dNegSquare.CloseOn(ctx, s1),
		s2.Wait(ctx, side.negateKernelComplete),
		dSquare.CloseOn(ctx, s2),
		s2.Record(ctx, side.squareFree),
		s1.Wait(ctx, side.squareFree))
	return ops, nil
}

// negateSquaresGraphWithStreamCapture captures negateSquaresInStream on the sample's stream in
// global mode and instantiates the graph.
func (e *env) negateSquaresGraphWithStreamCapture() (*graphs.Exec, error) {
	ctx := e.ctx
	side, err := e.newSideStream()
	if err != nil {
		return nil, err
	}
	g, err := graphs.Capture(ctx, e.s, func(context.Context) error {
		ops, err := e.negateSquaresInStream(e.s, side)
		if err != nil {
			return err
		}
		return actor.WaitAll(ctx, ops...) // captured operations complete once captured
	}, graphs.WithMode(graphs.Global))
	if err := errors.Join(err, side.close(ctx)); err != nil {
		return nil, err
	}
	x, err := g.Instantiate(ctx)
	return x, errors.Join(err, g.Close(ctx))
}

// negateSquaresGraphExplicitly builds the C sample's graph node by node:
//
//	alloc d_input
//	  alloc d_square
//	    copy the input to d_input
//	      squareArray ─────────────── copy d_square to the host ─┐
//	        free d_input                                          │
//	          alloc d_negSquare                                   │
//	            negateArray ──────────────────────────── free d_square
//	              copy d_negSquare to the host
//	                free d_negSquare (unless keep)
//
// The copies are copyArray kernel nodes (see the package comment). With keep, d_negSquare is
// not freed and its address comes back. It prints whether d_negSquare got d_input's address.
func (e *env) negateSquaresGraphExplicitly(keep bool) (x *graphs.Exec, dNegSquare cuda.DevicePtr, err error) {
	ctx, h, cfg := e.ctx, &e.host, e.cfg()
	n := int32(h.numElements)
	g, err := graphs.New(ctx, e.dev)
	if err != nil {
		return nil, 0, err
	}
	defer sample.Keep(&err, func() error { return g.Close(ctx) })

	allocInput, dInput, err := g.AddAlloc(ctx, nil, h.bytes)
	if err != nil {
		return nil, 0, err
	}
	// d_square's allocation follows d_input's, which keeps the graph simple; the copy into
	// d_input then depends on d_input's allocation through it.
	allocSquare, dSquare, err := g.AddAlloc(ctx, graphs.After(allocInput), h.bytes)
	if err != nil {
		return nil, 0, err
	}
	copyInput, err := g.AddKernel(ctx, graphs.After(allocSquare), e.copyKernel, cfg, h.dInput, dInput, n)
	if err != nil {
		return nil, 0, err
	}
	squareKernel, err := g.AddKernel(ctx, graphs.After(copyInput), e.square, cfg, dInput, dSquare, n)
	if err != nil {
		return nil, 0, err
	}
	copySquare, err := g.AddKernel(ctx, graphs.After(squareKernel), e.copyKernel, cfg, dSquare, h.dSquare, n)
	if err != nil {
		return nil, 0, err
	}
	// d_input is freed once squareArray has read it.
	freeInput, err := g.AddFree(ctx, graphs.After(squareKernel), dInput)
	if err != nil {
		return nil, 0, err
	}
	// d_negSquare is allocated after d_input's free, so that it may take d_input's address.
	allocNegSquare, dNegSquare, err := g.AddAlloc(ctx, graphs.After(freeInput), h.bytes)
	if err != nil {
		return nil, 0, err
	}
	if dNegSquare == dInput {
		fmt.Println("Check verified that d_negSquare and d_input share a virtual address.")
	}
	negateKernel, err := g.AddKernel(ctx, graphs.After(allocNegSquare), e.negate, cfg, dSquare, dNegSquare, n)
	if err != nil {
		return nil, 0, err
	}
	if _, err := g.AddFree(ctx, graphs.After(copySquare, negateKernel), dSquare); err != nil {
		return nil, 0, err
	}
	copyNegSquare, err := g.AddKernel(ctx, graphs.After(negateKernel), e.copyKernel, cfg, dNegSquare, h.dNegSquare, n)
	if err != nil {
		return nil, 0, err
	}
	if !keep {
		if _, err := g.AddFree(ctx, graphs.After(copyNegSquare), dNegSquare); err != nil {
			return nil, 0, err
		}
	}
	if x, err = g.Instantiate(ctx); err != nil {
		return nil, 0, err
	}
	return x, dNegSquare, nil
}

// freeGraph is the C sample's createFreeGraph: an executable graph of one node, which frees
// p.
func (e *env) freeGraph(p cuda.DevicePtr) (x *graphs.Exec, err error) {
	g, err := graphs.New(e.ctx, e.dev)
	if err != nil {
		return nil, err
	}
	defer sample.Keep(&err, func() error { return g.Close(e.ctx) })
	if _, err := g.AddFree(e.ctx, nil, p); err != nil {
		return nil, err
	}
	return g.Instantiate(e.ctx)
}

// validateGPU queues validateGPU on the stream: it raises the managed flag when d_negSquare
// differs from the reference.
func (e *env) validateGPU(dNegSquare cuda.DevicePtr) *streams.Future {
	return e.s.Launch(e.ctx, e.validate, e.cfg(), dNegSquare, e.refNegSquare, int32(e.host.numElements), e.foundValidationFailure)
}

// validateHost raises the managed flag when the host's negSquare differs from -(input²).
func (e *env) validateHost() {
	if hostMismatch(&e.host) >= 0 {
		e.foundValidationFailure.Host()[0] = 1
	}
}

// hostMismatch is the index of the first element of the host's negSquare that fails the
// check against -(input²), or -1.
func hostMismatch(h *hostArrays) int {
	in, neg := h.input.Host(), h.negSquare.Host()
	for i := range in {
		if !withinVariance(neg[i], in[i]*in[i]*-1) {
			return i
		}
	}
	return -1
}

// checkHostSilently checks the host's result without printing, where the C sample checks only
// the GPU's.
func (e *env) checkHostSilently(variant string) {
	if i := hostMismatch(&e.host); i >= 0 {
		e.failed = append(e.failed, fmt.Sprintf("%s: element %d of the host's result is %g, want %g",
			variant, i, e.host.negSquare.Host()[i], -e.host.input.Host()[i]*e.host.input.Host()[i]))
	}
}

// checkValidationFailure prints the verdict of the managed flag and lowers it.
func (e *env) checkValidationFailure(variant string) {
	flag := e.foundValidationFailure.Host()
	if flag[0] != 0 {
		fmt.Print("Validation FAILURE!\n\n")
		flag[0] = 0
		e.failed = append(e.failed, variant)
		return
	}
	fmt.Print("Validation PASSED!\n\n")
}
