// Command simplecudagraphs is NVIDIA's simpleCudaGraphs sample (cuda-samples, 3_CUDA_Features)
// done with gpuactor. It sums 16 Mi small floats on the GPU with two kernels — reduce, 512
// blocks of 512 threads each leaving one partial sum in double, then reduceFinal, one block
// summing the 512 partial sums — run as a CUDA graph of seven nodes built two ways, as the C
// sample does:
//
//	cudaGraphsManual:             node by node: copy the input from pinned host memory to the
//	                              GPU and clear the partial sums, then reduce; clear the
//	                              result, then (after reduce) reduceFinal; copy the result
//	                              back; a host node that prints it
//	cudaGraphsUsingStreamCapture: the same work captured (global mode) from three streams
//	                              that fork from the first through an event and join it
//	                              through two more: the copy on the first, the two clears on
//	                              the second and third
//
// For each graph it prints its node count, instantiates it, clones it and instantiates the
// clone, then launches the graph three times back to back on a stream of its own, waits for
// the stream, and does the same with the clone. The host node prints every launch's sum and
// resets the host's copy of the result to 0, as the sample's callback does; the port also
// checks each sum against one computed on the CPU, then prints PASS or FAIL.
//
//	go run ./examples/simplecudagraphs                             # the C sample's sizes
//	go run ./examples/simplecudagraphs -backend sim -n 100003      # small, for the simulator
//
// Differences from the C sample, and why:
//
//   - The result on the host. The C sample copies the result into a double on its stack:
//     pageable memory. gpuactor's graph copy nodes and captured copies take pinned host
//     memory only (device.HostBuffer), so the port copies it into 8 pinned bytes.
//   - The kernels. The C sample writes them with cooperative groups (cg::sync of the block
//     and of 32-thread tiles, tile32.shfl_down). NVRTC, which compiles gpuactor's kernels,
//     ships no cooperative_groups.h, so the port writes the same code with the intrinsics
//     those calls come down to for a one-dimensional block: __syncthreads, __syncwarp and
//     __shfl_down_sync over the full warp. The additions are the same, in the same order.
//   - The host node is a Go function, run on a goroutine of its own while CUDA's callback
//     thread waits for it (gpuactor never runs Go code on CUDA's thread); nodes after it, and
//     the stream's synchronization, wait for it as for a C callback.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"sync"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/examples/internal/sample"
	"github.com/gpuactor/gpuactor/graphs"
	"github.com/gpuactor/gpuactor/streams"
)

// source is the sample's two kernels (see the package comment for cooperative groups).
//
// reduce: each thread adds, in double, the elements i = its global index, + the grid's
// threads, …; then each warp folds its 32 sums into its first lane's slot of tmp by halving
// (16, 8, 4, 2, 1); then the block's thread 0 adds the 16 warps' sums, warp by warp, and
// writes them to outputVec[blockIdx.x].
//
// reduceFinal: each thread of the one block takes its element of inputVec (the grid-stride
// loop runs once when the input has no more elements than the block threads); the block
// halves them in shared memory down to 64, the first warp adds the second warp's, then folds
// its 32 sums by shuffles; thread 0 writes the result.
const source = `
#define THREADS_PER_BLOCK 512

extern "C" __global__ void reduce(float* inputVec, double* outputVec, size_t inputSize, size_t outputSize) {
    __shared__ double tmp[THREADS_PER_BLOCK];
    const unsigned int t = threadIdx.x;      // the block's thread_rank()
    const unsigned int lane = t % 32;        // the 32-thread tile's thread_rank()
    size_t globaltid = blockIdx.x * blockDim.x + t;

    double temp_sum = 0.0;
    for (int i = globaltid; i < inputSize; i += gridDim.x * blockDim.x)
        temp_sum += (double)inputVec[i];
    tmp[t] = temp_sum;
    __syncthreads();                         // cg::sync(block)

    double beta = temp_sum;
    for (int i = 32 / 2; i > 0; i >>= 1) {
        if (lane < i) {
            beta += tmp[t + i];
            tmp[t] = beta;
        }
        __syncwarp();                        // cg::sync(tile32)
    }
    __syncthreads();

    if (t == 0 && blockIdx.x < outputSize) {
        beta = 0.0;
        for (int i = 0; i < blockDim.x; i += 32)
            beta += tmp[i];
        outputVec[blockIdx.x] = beta;
    }
}

extern "C" __global__ void reduceFinal(double* inputVec, double* result, size_t inputSize) {
    __shared__ double tmp[THREADS_PER_BLOCK];
    const unsigned int t = threadIdx.x;
    size_t globaltid = blockIdx.x * blockDim.x + t;

    double temp_sum = 0.0;
    for (int i = globaltid; i < inputSize; i += gridDim.x * blockDim.x)
        temp_sum += (double)inputVec[i];
    tmp[t] = temp_sum;
    __syncthreads();

    if (blockDim.x >= 512 && t < 256) tmp[t] = temp_sum = temp_sum + tmp[t + 256];
    __syncthreads();
    if (blockDim.x >= 256 && t < 128) tmp[t] = temp_sum = temp_sum + tmp[t + 128];
    __syncthreads();
    if (blockDim.x >= 128 && t < 64) tmp[t] = temp_sum = temp_sum + tmp[t + 64];
    __syncthreads();

    if (t < 32) {
        if (blockDim.x >= 64) temp_sum += tmp[t + 32];
        for (int offset = 32 / 2; offset > 0; offset /= 2)
            temp_sum += __shfl_down_sync(0xffffffff, temp_sum, offset);   // tile32.shfl_down
    }
    if (t == 0) result[0] = temp_sum;
}
`

// simKernels are the two kernels for the simulator: the same double additions in the same
// order, so every partial sum and the result are bit for bit the GPU's.
var simKernels = map[string]cuda.SimKernel{
	"reduce": func(c *cuda.KernelCall) error {
		n, outputSize := int(c.Uint64(2)), int(c.Uint64(3))
		in := cuda.SimSlice[float32](c, 0, n)
		out := cuda.SimSlice[float64](c, 1, outputSize)
		grid, block := int(c.Grid.X), int(c.Block.X)
		tmp := make([]float64, block)
		for b := range min(grid, outputSize) { // blocks past outputSize write nothing
			for t := range tmp {
				s := 0.0
				for i := b*block + t; i < n; i += grid * block {
					s += float64(in[i])
				}
				tmp[t] = s
			}
			for w := 0; w < block; w += 32 { // each warp, by halving
				for i := 16; i > 0; i >>= 1 {
					for lane := range i {
						tmp[w+lane] += tmp[w+lane+i]
					}
				}
			}
			s := 0.0
			for i := 0; i < block; i += 32 {
				s += tmp[i]
			}
			out[b] = s
		}
		return nil
	},
	"reduceFinal": func(c *cuda.KernelCall) error {
		n := int(c.Uint64(2))
		in := cuda.SimSlice[float64](c, 0, n)
		grid, block := int(c.Grid.X), int(c.Block.X)
		if grid != 1 || block < 64 || block&(block-1) != 0 {
			return fmt.Errorf("reduceFinal simulated for one block of 64 threads or a larger power of two, not %d of %d", grid, block)
		}
		tmp := make([]float64, block)
		for t := range tmp {
			for i := t; i < n; i += block {
				tmp[t] += in[i]
			}
		}
		for half := min(block/2, 256); half >= 64; half /= 2 {
			for t := range half {
				tmp[t] += tmp[t+half]
			}
		}
		var warp [32]float64
		for t := range warp {
			warp[t] = tmp[t] + tmp[t+32]
		}
		for offset := 16; offset > 0; offset /= 2 { // lanes past 31-offset read their own value; lane 0 never needs them
			for lane := range 32 - offset {
				warp[lane] += warp[lane+offset]
			}
		}
		cuda.SimSlice[float64](c, 1, 1)[0] = warp[0]
		return nil
	},
}

// The sample's constants: elements to sum, threads per block, blocks of reduce (maxBlocks),
// launches of each graph (GRAPH_LAUNCH_ITERATIONS).
const (
	defaultSize           = 1 << 24
	threadsPerBlock       = 512
	maxBlocks             = 512
	graphLaunchIterations = 3
)

type config struct {
	n int // elements to sum
	sample.Flags
	opts []device.Option // more device options (tests)
}

func main() {
	var c config
	flag.IntVar(&c.n, "n", defaultSize, "elements to sum")
	c.Register()
	flag.Parse()
	sample.Finish(run(c))
}

// buffers are what both graphs use: the input in pinned host memory and on the GPU, the
// partial sums and the result on the GPU.
type buffers struct {
	reduce, final *device.Kernel
	inputH        *alloc.Pinned[float32]
	inputD        *device.Buffer // n floats
	outputD       *device.Buffer // maxBlocks doubles
	resultD       *device.Buffer // one double
	n             int
	want          float64 // the sum computed on the CPU
}

func (b *buffers) reduceConfig() cuda.LaunchConfig {
	return cuda.LaunchConfig{Grid: cuda.Dim(maxBlocks), Block: cuda.Dim(threadsPerBlock)}
}

func (b *buffers) finalConfig() cuda.LaunchConfig {
	return cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(threadsPerBlock)}
}

func run(c config) (err error) {
	if c.n <= 0 || c.n > 1<<30 {
		return errors.New("-n must be in [1, 2^30]") // the kernels index with an int
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

	fmt.Printf("%d elements\n", c.n)
	fmt.Printf("threads per block  = %d\n", threadsPerBlock)
	fmt.Printf("Graph Launch iterations = %d\n", graphLaunchIterations)

	mod, err := dev.Compile(ctx, device.Source{Name: "simplecudagraphs.cu", Code: source, Sim: simKernels})
	if err != nil {
		return err
	}
	defer sample.Keep(&err, func() error { return mod.Close(ctx) })
	b := &buffers{n: c.n}
	if b.reduce, err = mod.Kernel(ctx, "reduce"); err != nil {
		return err
	}
	if b.final, err = mod.Kernel(ctx, "reduceFinal"); err != nil {
		return err
	}
	if b.inputH, err = alloc.MallocPinned[float32](ctx, dev, c.n); err != nil {
		return err
	}
	defer sample.Keep(&err, func() error { return b.inputH.Close(ctx) })
	for _, m := range []struct {
		dst  **device.Buffer
		size uint64
	}{{&b.inputD, uint64(4 * c.n)}, {&b.outputD, 8 * maxBlocks}, {&b.resultD, 8}} {
		if *m.dst, err = dev.MallocBytes(ctx, m.size); err != nil {
			return err
		}
		defer sample.Keep(&err, func() error { return (*m.dst).Close(ctx) })
	}

	// init_input: (rand() & 0xFF) / RAND_MAX, with glibc's unseeded rand(), as on Linux.
	rng := sample.NewCRand()
	for i, in := 0, b.inputH.Host(); i < c.n; i++ {
		in[i] = float32(rng.Next()&0xFF) / float32(math.MaxInt32)
		b.want += float64(in[i])
	}

	// The C sample runs the second part whatever the first gave.
	return errors.Join(cudaGraphsManual(ctx, dev, b), cudaGraphsUsingStreamCapture(ctx, dev, b))
}

// callback is the host node's function and its data: the name it prints and the pinned
// double the graph copies the result into. It also keeps the sums it saw, for the check.
type callback struct {
	name   string
	result *alloc.Pinned[float64]
	mu     sync.Mutex
	seen   []float64
}

// fn is myHostNodeCallback: print the result, then reset it.
func (cb *callback) fn() {
	r := cb.result.Host()
	fmt.Printf("[%s] Host callback final reduced sum = %f\n", cb.name, r[0])
	cb.mu.Lock()
	cb.seen = append(cb.seen, r[0])
	cb.mu.Unlock()
	r[0] = 0
}

// check takes the sums seen since the last check and compares them with the CPU's: there
// must be one for each launch, each within 1e-8 relative (the GPU adds in another order).
func (cb *callback) check(what string, want float64) error {
	cb.mu.Lock()
	seen := cb.seen
	cb.seen = nil
	cb.mu.Unlock()
	if len(seen) != graphLaunchIterations {
		return fmt.Errorf("%s: the host node ran %d times for %d launches", what, len(seen), graphLaunchIterations)
	}
	for i, got := range seen {
		if !(math.Abs(got-want) <= 1e-8*math.Abs(want)) {
			return fmt.Errorf("%s, launch %d: sum %.17g, the CPU's %.17g", what, i, got, want)
		}
	}
	return nil
}

func newCallback(ctx context.Context, dev *device.Device, name string) (*callback, error) {
	result, err := alloc.MallocPinned[float64](ctx, dev, 1)
	if err != nil {
		return nil, err
	}
	return &callback{name: name, result: result}, nil
}

func cudaGraphsManual(ctx context.Context, dev *device.Device, b *buffers) (err error) {
	streamForGraph, err := streams.New(ctx, dev, streams.Blocking()) // as cudaStreamCreate
	if err != nil {
		return err
	}
	defer sample.Keep(&err, func() error { return streamForGraph.Close(ctx) })
	cb, err := newCallback(ctx, dev, "cudaGraphsManual")
	if err != nil {
		return err
	}
	defer sample.Keep(&err, func() error { return cb.result.Close(ctx) })

	graph, err := graphs.New(ctx, dev)
	if err != nil {
		return err
	}
	defer sample.Keep(&err, func() error { return graph.Close(ctx) })
	memcpyNode, err := graph.AddCopyToDevice(ctx, nil, b.inputD, b.inputH.HostBuffer)
	if err != nil {
		return err
	}
	memsetNode, err := graph.AddMemset(ctx, nil, b.outputD, 0)
	if err != nil {
		return err
	}
	kernelNode, err := graph.AddKernel(ctx, graphs.After(memsetNode, memcpyNode), b.reduce, b.reduceConfig(),
		b.inputD, b.outputD, uint64(b.n), uint64(maxBlocks))
	if err != nil {
		return err
	}
	if memsetNode, err = graph.AddMemset(ctx, nil, b.resultD, 0); err != nil {
		return err
	}
	if kernelNode, err = graph.AddKernel(ctx, graphs.After(kernelNode, memsetNode), b.final, b.finalConfig(),
		b.outputD, b.resultD, uint64(maxBlocks)); err != nil {
		return err
	}
	if memcpyNode, err = graph.AddCopyFromDevice(ctx, graphs.After(kernelNode), cb.result.HostBuffer, b.resultD); err != nil {
		return err
	}
	if _, err = graph.AddHost(ctx, graphs.After(memcpyNode), cb.fn); err != nil {
		return err
	}
	nodes, err := graph.Nodes(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("\nNum of nodes in the graph created manually = %d\n", len(nodes))
	return instantiateAndLaunch(ctx, graph, streamForGraph, cb, b.want)
}

func cudaGraphsUsingStreamCapture(ctx context.Context, dev *device.Device, b *buffers) (err error) {
	ss := make([]*streams.Stream, 4) // stream1, stream2, stream3, streamForGraph
	for i := range ss {
		if ss[i], err = streams.New(ctx, dev, streams.Blocking()); err != nil {
			return err
		}
		defer sample.Keep(&err, func() error { return ss[i].Close(ctx) })
	}
	stream1, stream2, stream3, streamForGraph := ss[0], ss[1], ss[2], ss[3]
	es := make([]*streams.Event, 3) // forkStreamEvent, memsetEvent1, memsetEvent2
	for i := range es {
		if es[i], err = streams.NewEvent(ctx, dev); err != nil { // as cudaEventCreate
			return err
		}
		defer sample.Keep(&err, func() error { return es[i].Close(ctx) })
	}
	forkStreamEvent, memsetEvent1, memsetEvent2 := es[0], es[1], es[2]
	cb, err := newCallback(ctx, dev, "cudaGraphsUsingStreamCapture")
	if err != nil {
		return err
	}
	defer sample.Keep(&err, func() error { return cb.result.Close(ctx) })

	graph, err := graphs.Capture(ctx, stream1, func(ctx context.Context) error {
		// Captured operations complete when they are captured: waiting collects their errors.
		return actor.WaitAll(ctx,
			stream1.Record(ctx, forkStreamEvent),
			stream2.Wait(ctx, forkStreamEvent),
			stream3.Wait(ctx, forkStreamEvent),
			stream1.CopyHostToDevice(ctx, b.inputD, b.inputH.HostBuffer),
			stream2.Memset(ctx, b.outputD, 0),
			stream2.Record(ctx, memsetEvent1),
			stream3.Memset(ctx, b.resultD, 0),
			stream3.Record(ctx, memsetEvent2),
			stream1.Wait(ctx, memsetEvent1),
			stream1.Launch(ctx, b.reduce, b.reduceConfig(), b.inputD, b.outputD, uint64(b.n), uint64(maxBlocks)),
			stream1.Wait(ctx, memsetEvent2),
			stream1.Launch(ctx, b.final, b.finalConfig(), b.outputD, b.resultD, uint64(maxBlocks)),
			stream1.CopyDeviceToHost(ctx, cb.result.HostBuffer, b.resultD),
			stream1.HostFunc(ctx, cb.fn))
	}, graphs.WithMode(graphs.Global))
	if err != nil {
		return err
	}
	defer sample.Keep(&err, func() error { return graph.Close(ctx) })
	nodes, err := graph.Nodes(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("\nNum of nodes in the graph created using stream capture API = %d\n", len(nodes))
	return instantiateAndLaunch(ctx, graph, streamForGraph, cb, b.want)
}

// instantiateAndLaunch is what both parts of the C sample end with: instantiate the graph,
// clone it and instantiate the clone, launch the graph three times back to back and wait for
// the stream, then the same with the clone; and, beyond the C sample, check the sums the host
// node saw.
func instantiateAndLaunch(ctx context.Context, graph *graphs.Graph, s *streams.Stream, cb *callback, want float64) (err error) {
	graphExec, err := graph.Instantiate(ctx)
	if err != nil {
		return err
	}
	defer sample.Keep(&err, func() error { return graphExec.Close(ctx) })
	clonedGraph, err := graph.Clone(ctx)
	if err != nil {
		return err
	}
	defer sample.Keep(&err, func() error { return clonedGraph.Close(ctx) })
	clonedGraphExec, err := clonedGraph.Instantiate(ctx)
	if err != nil {
		return err
	}
	defer sample.Keep(&err, func() error { return clonedGraphExec.Close(ctx) })

	if err := launches(ctx, graphExec, s); err != nil {
		return err
	}
	if err := cb.check(cb.name, want); err != nil {
		return err
	}
	fmt.Printf("Cloned Graph Output.. \n")
	if err := launches(ctx, clonedGraphExec, s); err != nil {
		return err
	}
	return cb.check(cb.name+", cloned graph", want)
}

// launches queues the graph's launches back to back, then synchronizes the stream.
func launches(ctx context.Context, x *graphs.Exec, s *streams.Stream) error {
	futs := make([]actor.Waiter, graphLaunchIterations)
	for i := range futs {
		futs[i] = x.Launch(ctx, s)
	}
	if err := s.Synchronize(ctx); err != nil {
		return err
	}
	return actor.WaitAll(ctx, futs...)
}
