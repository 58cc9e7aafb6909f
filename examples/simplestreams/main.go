// Command simplestreams is NVIDIA's simpleStreams sample (cuda-samples, 0_Introduction) done
// with gpuactor. A kernel adds 5 to every int of a 64 MiB array 5 times; the program times,
// with events, what the C sample times and prints the same lines:
//
//	memcopy:       one copy of the array from the GPU to pinned host memory
//	kernel:        one launch of the kernel over the array
//	non-streamed:  per repetition, the kernel then a copy of the array back that the host
//	               waits for (the C sample's synchronous cudaMemcpy), all on one stream
//	4 streams:     per repetition, the array in 4 chunks, each chunk's kernel and copy back
//	               on a stream of its own, so that one chunk's copy runs beside another's
//	               kernel
//
// then checks that every element of the streamed result is 5 × 5 × reps, and ends with PASS
// or FAIL. Nothing is copied to the GPU inside a timed part: the array starts as zeros set
// on the GPU, as in the C sample.
//
//	go run ./examples/simplestreams                                   # the C sample's sizes: 16 Mi ints, 4 streams, 100 repetitions
//	go run ./examples/simplestreams -backend sim -n 1048576 -reps 4   # a size the simulator runs quickly
//
// Differences from the C sample, and why:
//
//   - Host memory. By default the C sample maps page-aligned memory with mmap and page-locks
//     it with cudaHostRegister(cudaHostRegisterMapped) (-use_cuda_malloc_host: cudaMallocHost).
//     gpuactor's asynchronous copies take only memory from cudaHostAlloc (a device.HostBuffer),
//     not a registration (alloc.Registered), so the port allocates with cudaHostAlloc, mapped
//     into the device's address space (cudaHostAllocMapped) by default and without flags
//     (cudaMallocHost's allocation) with -use_cuda_malloc_host. Both are page-locked, which is
//     what the copies' speed depends on.
//   - Chunks. The C sample copies chunk i into the host array at offset i·n/4. A gpuactor copy
//     always starts at the start of its HostBuffer, so each chunk has a pinned buffer of its
//     own beside the whole array's, and the check reads the chunks in order.
//   - The legacy default stream. The C sample records its events, and runs the non-streamed
//     part, on stream 0, which its blocking streams (cudaStreamCreate) wait for and which
//     waits for them. gpuactor never queues work on stream 0, so the port uses the first of
//     its streams instead, and makes the implicit synchronization explicit: the other
//     streams wait for the start event, and the first waits for an event recorded on each
//     of the others before recording the stop event.
//   - Device flags. The C sample calls cudaSetDeviceFlags(cudaDeviceScheduleAuto |
//     cudaDeviceMapHost) by default. gpuactor sets no device flags: a primary context's
//     schedule flag is cudaDeviceScheduleAuto unless set, and host memory is always mapped
//     under unified addressing, so nothing changes. The C sample's -sync_method is not ported.
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
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/examples/internal/sample"
	"github.com/gpuactor/gpuactor/streams"
)

// source is simpleStreams' kernel: each thread adds *factor to its element num_iterations
// times. It has no bound: the launches cover the array exactly.
const source = `
extern "C" __global__ void init_array(int* g_data, int* factor, int num_iterations) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    for (int i = 0; i < num_iterations; i++) {
        g_data[idx] += *factor;
    }
}
`

// simKernels is init_array for the simulator: the same arithmetic, in Go.
var simKernels = map[string]cuda.SimKernel{
	"init_array": func(c *cuda.KernelCall) error {
		data := cuda.SimSlice[int32](c, 0, int(c.Threads()))
		factor := cuda.SimSlice[int32](c, 1, 1)[0]
		iters := int(c.Int32(2))
		for i := range data {
			for range iters {
				data[i] += factor
			}
		}
		return nil
	},
}

// The sample's constants: the block size, the kernel's loop count and the value it adds.
const (
	threads     = 512
	niterations = 5
	factor      = 5
)

type config struct {
	n                 int  // ints in the array, before the C sample's scaling for small GPUs
	nstreams          int  // streams of the streamed part
	nreps             int  // repetitions of the non-streamed and streamed parts
	useCudaMallocHost bool // the C sample's --use_cuda_malloc_host
	sample.Flags
	opts []device.Option // more device options (tests)
}

func main() {
	var c config
	flag.IntVar(&c.n, "n", 16*1024*1024, "ints in the array (a multiple of 512 × -streams)")
	flag.IntVar(&c.nstreams, "streams", 4, "streams of the streamed part")
	flag.IntVar(&c.nreps, "reps", 100, "repetitions of the non-streamed and streamed parts (the times printed are per repetition)")
	flag.BoolVar(&c.useCudaMallocHost, "use_cuda_malloc_host", false, "allocate the host memory as cudaMallocHost does instead of mapped (the C sample's flag)")
	c.Register()
	flag.Parse()
	sample.Finish(run(c))
}

func run(c config) (err error) {
	if c.n <= 0 || c.nstreams <= 0 || c.nreps <= 0 {
		return errors.New("-n, -streams and -reps must be positive")
	}
	if int64(factor)*niterations*int64(c.nreps+1) > math.MaxInt32 {
		return fmt.Errorf("-reps %d: the sums would overflow an int", c.nreps)
	}
	ctx := context.Background()
	fmt.Printf("[ simpleStreams ]\n\n")
	// The C sample always ends up with method 0 and 100 repetitions: without --sync_method its
	// argument parser reads 0. gpuactor leaves the schedule flag at its default, which is 0.
	fmt.Println("Device synchronization method set to = 0 (Automatic Blocking)")
	fmt.Printf("Setting reps to %d to demonstrate steady state\n", c.nreps)

	dev, err := device.Open(ctx, c.Ordinal, append(c.Options(), c.opts...)...)
	if err != nil {
		return err
	}
	defer sample.Keep(&err, dev.Close)
	p := dev.Properties()
	major, minor := p.ComputeCapability.Major, p.ComputeCapability.Minor
	fmt.Printf("\n> GPU Device %d: \"%s\" with compute capability %d.%d\n\n", dev.Ordinal(), sample.ArchName(os.Stdout, major, minor), major, minor)
	sample.Describe(dev)

	mapped := !c.useCudaMallocHost
	if mapped {
		fmt.Printf("Device: <%s> canMapHostMemory: %s\n", p.Name, yesNo(p.CanMapHostMemory))
		if !p.CanMapHostMemory {
			fmt.Println("Using cudaMallocHost, CUDA device does not support mapping of generic host memory")
			mapped = false
		}
	}

	// Devices of fewer than 32 cores get a smaller array.
	cores, _ := sample.CoresPerSM(os.Stdout, major, minor)
	scale := max(32/(float32(cores)*float32(p.MultiProcessors)), 1)
	n := int(math.RoundToEven(float64(float32(c.n) / scale)))
	fmt.Printf("> CUDA Capable: SM %d.%d hardware\n", major, minor)
	fmt.Printf("> %d Multiprocessor(s) x %d (Cores/Multiprocessor) = %d (Cores)\n", p.MultiProcessors, cores, cores*p.MultiProcessors)
	fmt.Printf("> scale_factor = %1.4f\n", 1/scale)
	fmt.Printf("> array_size   = %d\n\n", n)
	// The launches cover n elements only when it is a multiple of a block per stream; the C
	// sample does not check, and would report wrong elements.
	if n%(threads*c.nstreams) != 0 {
		return fmt.Errorf("the array size %d is not a multiple of %d threads × %d streams", n, threads, c.nstreams)
	}
	nbytes := uint64(4 * n)
	fmt.Println("> Using CPU/GPU Device Synchronization method (cudaDeviceScheduleAuto)")

	// Host memory: the whole array, and a buffer per chunk (see the package comment).
	mib := float64(nbytes) / 1048576
	var hostFlags []device.HostFlag
	if mapped {
		hostFlags = append(hostFlags, device.HostMapped)
		fmt.Printf("> cudaHostAlloc(cudaHostAllocMapped) allocating %4.2f Mbytes of system memory, and again in %d chunks (for mmap() + cudaHostRegister(cudaHostRegisterMapped))\n", mib, c.nstreams)
	} else {
		fmt.Printf("> cudaMallocHost() allocating %4.2f Mbytes of system memory, and again in %d chunks\n", mib, c.nstreams)
	}
	whole, err := dev.MallocPinnedBytes(ctx, nbytes, hostFlags...)
	if err != nil {
		return err
	}
	defer sample.Keep(&err, func() error { return whole.Close(ctx) })
	chunk := n / c.nstreams
	parts := make([]*device.HostBuffer, c.nstreams)
	for i := range parts {
		if parts[i], err = dev.MallocPinnedBytes(ctx, nbytes/uint64(c.nstreams), hostFlags...); err != nil {
			return err
		}
		defer sample.Keep(&err, func() error { return parts[i].Close(ctx) })
	}

	mod, err := dev.Compile(ctx, device.Source{Name: "simplestreams.cu", Code: source, Sim: simKernels})
	if err != nil {
		return err
	}
	defer sample.Keep(&err, func() error { return mod.Close(ctx) })
	kern, err := mod.Kernel(ctx, "init_array")
	if err != nil {
		return err
	}

	// Streams, as cudaStreamCreate makes them: blocking. The first also runs what the C
	// sample runs on stream 0.
	ss := make([]*streams.Stream, c.nstreams)
	for i := range ss {
		if ss[i], err = streams.New(ctx, dev, streams.Blocking()); err != nil {
			return err
		}
		defer sample.Keep(&err, func() error { return ss[i].Close(ctx) })
	}
	s0 := ss[0]

	// Device memory: the array, zeroed, and the value the kernel adds, read through a pointer.
	dA, err := dev.MallocBytes(ctx, nbytes)
	if err != nil {
		return err
	}
	defer sample.Keep(&err, func() error { return dA.Close(ctx) })
	if err := s0.Memset(ctx, dA, 0).Wait(ctx); err != nil {
		return err
	}
	dC, err := dev.MallocBytes(ctx, 4)
	if err != nil {
		return err
	}
	defer sample.Keep(&err, func() error { return dC.Close(ctx) })
	if err := streams.CopyToDevice(ctx, s0, dC, []int32{factor}).Wait(ctx); err != nil {
		return err
	}

	fmt.Printf("\nStarting Test\n")

	// The timing events, with the C sample's flags for method 0 (cudaEventDefault), and
	// untimed ones that join the other streams back into the first.
	var events []*streams.Event
	defer func() {
		for _, e := range events {
			sample.Keep(&err, func() error { return e.Close(ctx) })
		}
	}()
	newEvent := func(flags ...streams.EventFlag) (*streams.Event, error) {
		e, err := streams.NewEvent(ctx, dev, flags...)
		if err == nil {
			events = append(events, e)
		}
		return e, err
	}
	start, err := newEvent()
	if err != nil {
		return err
	}
	stop, err := newEvent()
	if err != nil {
		return err
	}
	joins := make([]*streams.Event, c.nstreams)
	for i := 1; i < c.nstreams; i++ {
		if joins[i], err = newEvent(streams.DisableTiming); err != nil {
			return err
		}
	}
	// elapsed waits for stop, then checks every operation queued since start and returns
	// the time between the two in milliseconds, as cudaEventElapsedTime does.
	elapsed := func(ops []actor.Waiter) (float32, error) {
		if err := stop.Synchronize(ctx); err != nil {
			return 0, err
		}
		if err := actor.WaitAll(ctx, ops...); err != nil {
			return 0, err
		}
		d, err := streams.Elapsed(ctx, start, stop)
		return float32(d) / float32(time.Millisecond), err
	}
	launch := func(s *streams.Stream, m device.Mem, elems int) *streams.Future {
		cfg := cuda.LaunchConfig{Grid: cuda.Dim(uint32(elems / threads)), Block: cuda.Dim(threads)}
		return s.Launch(ctx, kern, cfg, m, dC, int32(niterations))
	}

	// memcopy: one copy of the array back to the host.
	ops := []actor.Waiter{
		s0.Record(ctx, start),
		s0.CopyDeviceToHost(ctx, whole, dA),
		s0.Record(ctx, stop),
	}
	timeMemcpy, err := elapsed(ops)
	if err != nil {
		return err
	}
	fmt.Printf("memcopy:\t%.2f\n", timeMemcpy)

	// kernel: one launch over the array. It is the module's first launch, as in the C sample.
	ops = append(ops[:0],
		s0.Record(ctx, start),
		launch(s0, dA, n),
		s0.Record(ctx, stop))
	timeKernel, err := elapsed(ops)
	if err != nil {
		return err
	}
	fmt.Printf("kernel:\t\t%.2f\n", timeKernel)

	// non-streamed: each repetition launches the kernel, copies the array back and waits
	// for the copy before the next launch, as the C sample's cudaMemcpy does.
	ops = append(ops[:0], s0.Record(ctx, start))
	for range c.nreps {
		ops = append(ops, launch(s0, dA, n))
		if err := s0.CopyDeviceToHost(ctx, whole, dA).Wait(ctx); err != nil {
			return err
		}
	}
	ops = append(ops, s0.Record(ctx, stop))
	t, err := elapsed(ops)
	if err != nil {
		return err
	}
	fmt.Printf("non-streamed:\t%.2f\n", t/float32(c.nreps))
	// Not in the C sample, and outside the timed parts: the kernel part and each repetition
	// added 25 to every element.
	if err := check(device.HostSlice[int32](whole), 0, factor*niterations*int32(c.nreps+1)); err != nil {
		return fmt.Errorf("non-streamed result: %w", err)
	}

	// nstreams streams: the host chunks are set to all ones bits and the array to zeros,
	// outside the timed part, so that the check sees only what this part did. Each
	// repetition launches the kernel on every chunk, each on its stream, then queues every
	// chunk's copy back, the order the C sample issues them in.
	for _, part := range parts {
		b := part.Host()
		for i := range b {
			b[i] = 255
		}
	}
	if err := s0.Memset(ctx, dA, 0).Wait(ctx); err != nil {
		return err
	}
	chunkOf := func(i int) device.Slice {
		return device.Range(dA, uint64(4*i*chunk), nbytes/uint64(c.nstreams))
	}
	ops = append(ops[:0], s0.Record(ctx, start))
	for _, s := range ss[1:] {
		ops = append(ops, s.Wait(ctx, start))
	}
	for range c.nreps {
		for i, s := range ss {
			ops = append(ops, launch(s, chunkOf(i), n/c.nstreams))
		}
		for i, s := range ss {
			ops = append(ops, s.CopyDeviceToHost(ctx, parts[i], chunkOf(i)))
		}
	}
	for i := 1; i < c.nstreams; i++ {
		ops = append(ops, ss[i].Record(ctx, joins[i]), s0.Wait(ctx, joins[i]))
	}
	ops = append(ops, s0.Record(ctx, stop))
	t, err = elapsed(ops)
	if err != nil {
		return err
	}
	fmt.Printf("%d streams:\t%.2f\n", c.nstreams, t/float32(c.nreps))

	fmt.Println("-------------------------------")
	want := factor * niterations * int32(c.nreps)
	for i, part := range parts {
		if err := check(device.HostSlice[int32](part), i*chunk, want); err != nil {
			return fmt.Errorf("streamed result: %w", err)
		}
	}
	return nil
}

// check compares got, elements off, off+1, … of the array, with want. At the first element
// that differs it prints what the C sample's correct_data prints, and fails.
func check(got []int32, off int, want int32) error {
	for j, v := range got {
		if v != want {
			fmt.Printf("%d: %d %d\n", off+j, v, want)
			return fmt.Errorf("element %d is %d, want %d", off+j, v, want)
		}
	}
	return nil
}

func yesNo(b bool) string {
	if b {
		return "Yes"
	}
	return "No"
}
