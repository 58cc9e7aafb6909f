// Command simplecallback is NVIDIA's simpleCallback sample (cuda-samples, 0_Introduction) done
// with gpuactor: 8 workloads of 100,000 ints, spread over every GPU, each of the form "CPU
// prepares, GPU processes, CPU checks". A goroutine per workload, as the C sample's thread,
// makes a stream, device memory and portable pinned host memory, fills the host memory with
// id + i, queues a copy to the GPU, a kernel that adds 1 to every element and a copy back,
// then a host function, and ends without waiting. When the stream reaches the host function
// it starts a new goroutine that checks the results, frees the workload's memory and stream,
// and counts itself done. The main goroutine waits for all of them and prints Success or
// Failure, then PASS or FAIL. It prints the C sample's lines.
//
//	go run ./examples/simplecallback
//	go run ./examples/simplecallback -backend sim   # the simulator has two devices
//
// The host function is the C sample's stream callback (cudaStreamAddCallback): it runs once
// the GPU has finished the work queued before it, and the stream's later work waits for it to
// return, so it only starts the checking goroutine; the checks and the frees, which wait for
// the device, happen there. The C callback also checks the stream's status, a parameter that
// host functions lack: the checking goroutine gets the same answer from the futures of the
// copies and the kernel.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"sync"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/examples/internal/sample"
	"github.com/gpuactor/gpuactor/streams"
)

// source is simpleCallback's kernel.
const source = `
extern "C" __global__ void incKernel(int* data, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) data[i]++;
}
`

// simKernels is incKernel for the simulator: the same arithmetic, in Go.
var simKernels = map[string]cuda.SimKernel{
	"incKernel": func(c *cuda.KernelCall) error {
		n := int(c.Int32(1))
		data := cuda.SimSlice[int32](c, 0, n)
		for i := range min(uint64(n), c.Threads()) {
			data[i]++
		}
		return nil
	},
}

const (
	threads = 512 // the kernel's block size
	maxGPUs = 32  // the most GPUs the C sample keeps a list of
)

type config struct {
	workloads int // the C sample's N_workloads
	n         int // ints per workload, its N_elements_per_workload
	sample.Flags
	opts []device.Option // more device options (tests)
}

func main() {
	var c config
	flag.IntVar(&c.workloads, "workloads", 8, "workloads, each on a goroutine and a stream of its own")
	flag.IntVar(&c.n, "n", 100000, "ints per workload")
	c.RegisterBackend()
	flag.Parse()
	sample.Finish(run(c))
}

// workload is one workload, as the C sample's heterogeneous_workload.
type workload struct {
	id   int
	dev  *device.Device
	kern *device.Kernel
	n    int

	host     *device.HostBuffer
	buf      *device.Buffer
	stream   *streams.Stream
	ops      []actor.Waiter       // the copies and the kernel, whose errors the check reports
	callback chan *streams.Future // the host function's future, and its error
	firstN   int                  // how many elements the C sample's check compares: the number of workloads

	success bool
	err     error // why it failed: the GPU's error, a wrong element or a failed free
	done    *sync.WaitGroup
	once    sync.Once // postprocess starts once
}

func run(c config) (err error) {
	if c.workloads <= 0 || c.n <= 0 {
		return errors.New("-workloads and -n must be positive")
	}
	ctx := context.Background()
	fmt.Println("Starting simpleCallback")
	devs, err := device.OpenAll(ctx, append(c.Options(), c.opts...)...)
	if err != nil {
		return err
	}
	defer sample.CloseAll(&err, devs)
	fmt.Printf("Found %d CUDA capable GPUs\n", len(devs))
	if len(devs) > maxGPUs {
		fmt.Printf("simpleCallback only supports %d GPU(s)\n", maxGPUs)
	}

	var gpus []*device.Device
	for _, d := range devs {
		p := d.Properties()
		major, minor := p.ComputeCapability.Major, p.ComputeCapability.Minor
		// The C sample computes major << 4 + minor, which C reads as major << (4 + minor).
		capable := major<<(4+minor) >= 0x11
		fmt.Printf("GPU[%d] %s supports SM %d.%d, %s GPU Callback Functions\n", d.Ordinal(), p.Name, major, minor,
			map[bool]string{true: "capable", false: "NOT capable"}[capable])
		if capable && len(gpus) < maxGPUs {
			gpus = append(gpus, d)
		}
	}
	fmt.Printf("%d GPUs available to run Callback Functions\n", len(gpus))
	if len(gpus) == 0 {
		return errors.New("no GPU to run the workloads on")
	}
	for _, d := range gpus {
		sample.Describe(d)
	}

	// A module belongs to one device: compile for each (the later compiles hit the cache).
	// The C sample's kernel is part of its binary; here it is ready before the workloads.
	kernels := map[*device.Device]*device.Kernel{}
	for _, d := range gpus {
		mod, err := d.Compile(ctx, device.Source{Name: "simplecallback.cu", Code: source, Sim: simKernels})
		if err != nil {
			return err
		}
		defer sample.Keep(&err, func() error { return mod.Close(ctx) })
		if kernels[d], err = mod.Kernel(ctx, "incKernel"); err != nil {
			return err
		}
	}

	// The main goroutine starts a goroutine per workload, then waits until every workload's
	// check is done: the WaitGroup is the C sample's barrier.
	fmt.Printf("Starting %d heterogeneous computing workloads\n", c.workloads)
	var done sync.WaitGroup
	workloads := make([]*workload, c.workloads)
	for i := range workloads {
		d := gpus[i%len(gpus)]
		w := &workload{id: i, dev: d, kern: kernels[d], n: c.n, firstN: c.workloads, done: &done,
			callback: make(chan *streams.Future, 1)}
		workloads[i] = w
		done.Add(1)
		go w.launch(ctx)
	}
	done.Wait()
	fmt.Printf("Total of %d workloads finished:\n", c.workloads)

	success := true
	var errs []error
	for _, w := range workloads {
		success = success && w.success
		if w.err != nil {
			errs = append(errs, fmt.Errorf("workload %d (device %d): %w", w.id, w.dev.Ordinal(), w.err))
		}
	}
	fmt.Println(map[bool]string{true: "Success", false: "Failure"}[success])
	if !success {
		return errors.Join(append(errs, errors.New("a workload failed"))...)
	}
	return nil
}

// launch is the C sample's launch thread: it allocates the workload's resources, fills its
// input, queues the GPU's work and the host function, and returns without waiting.
func (w *workload) launch(ctx context.Context) {
	if err := w.queue(ctx); err != nil {
		w.err = err
		w.finish(ctx)
	}
}

func (w *workload) queue(ctx context.Context) (err error) {
	// cudaStreamCreate makes a blocking stream.
	if w.stream, err = streams.New(ctx, w.dev, streams.Blocking()); err != nil {
		return err
	}
	if w.buf, err = w.dev.MallocBytes(ctx, uint64(4*w.n)); err != nil {
		return err
	}
	if w.host, err = w.dev.MallocPinnedBytes(ctx, uint64(4*w.n), device.HostPortable); err != nil {
		return err
	}
	data := device.HostSlice[int32](w.host)
	for i := range data {
		data[i] = int32(w.id + i)
	}
	cfg := cuda.LaunchConfig{Grid: cuda.Dim(uint32((w.n + threads - 1) / threads)), Block: cuda.Dim(threads)}
	s := w.stream
	w.ops = append(w.ops,
		s.CopyHostToDevice(ctx, w.buf, w.host),
		s.Launch(ctx, w.kern, cfg, w.buf, int32(w.n)),
		s.CopyDeviceToHost(ctx, w.host, w.buf))
	// The callback: it runs once the copy back has finished. Later work on the stream would
	// wait for it, so it only hands the workload to a new goroutine.
	cb := s.HostFunc(ctx, func() { w.finish(ctx) })
	w.callback <- cb // the host function may be running already
	// Not in the C sample, which exits at the first CUDA error: should the host function
	// never run (a failed device), its failed future starts the check instead, which
	// reports the error, rather than leaving the main goroutine waiting.
	go func() {
		if _, err := cb.Await(ctx); err != nil {
			w.finish(ctx)
		}
	}()
	return nil
}

// finish starts the workload's postprocess goroutine, once.
func (w *workload) finish(ctx context.Context) {
	w.once.Do(func() { go w.postprocess(ctx) })
}

// postprocess is the C sample's postprocess thread: it checks the results, frees the
// workload's resources and counts the workload done.
func (w *workload) postprocess(ctx context.Context) {
	defer w.done.Done()
	// The stream's status, which the C callback checks: the futures of the work queued on
	// the stream, the host function's included (it has returned or is about to), carry the
	// GPU's errors.
	ops := w.ops
	if w.err == nil { // queued: the host function was too
		ops = append(ops, <-w.callback)
	}
	if err := actor.WaitAll(ctx, ops...); err != nil {
		w.err = errors.Join(w.err, err)
	}
	if w.err == nil {
		w.success, w.err = check(device.HostSlice[int32](w.host), w.id, w.firstN)
	}
	w.free(ctx)
}

// check is the C sample's check of a workload's results, and more. The C sample compares
// its first N_workloads elements (its loop runs to the number of workloads, not of
// elements) with id + i + 1; success is that. Every other element is checked too; a wrong
// one fails the workload as well.
func check(data []int32, id, firstN int) (bool, error) {
	success := true
	for i := range min(firstN, len(data)) {
		success = success && data[i] == int32(i+id+1)
	}
	for i, v := range data {
		if want := int32(i + id + 1); v != want {
			return false, fmt.Errorf("element %d is %d, want %d", i, v, want)
		}
	}
	return success, nil
}

// free frees the workload's memory and stream, as the C sample's postprocess thread does;
// a failed free fails the workload.
func (w *workload) free(ctx context.Context) {
	var errs []error
	if w.buf != nil {
		errs = append(errs, w.buf.Close(ctx))
	}
	if w.host != nil {
		errs = append(errs, w.host.Close(ctx))
	}
	if w.stream != nil {
		errs = append(errs, w.stream.Close(ctx))
	}
	if err := errors.Join(errs...); err != nil {
		w.success = false
		w.err = errors.Join(w.err, err)
	}
}
