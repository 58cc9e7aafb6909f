// Command simplemultigpu is NVIDIA's simpleMultiGPU sample done the gpuactor way: it sums
// 32 Mi random floats over every GPU of the machine. Each GPU gets a plan — its share of the
// input in pinned host memory, device buffers, and one stream — and a job of a group (package
// group) runs the plan on it: copy the share up, reduce it to 8192 partial sums with a kernel,
// copy those back, and add them up on the host. The host then adds the GPUs' sums, computes
// the same sum itself in double precision, and passes when the two differ by less than 1e-5
// relative. It prints what the C sample prints, then PASS or FAIL.
//
//	go run ./examples/simplemultigpu
//	go run ./examples/simplemultigpu -backend sim   # the simulator has two devices
//	go run ./examples/simplemultigpu -phases        # and where each GPU's time went, on stderr
//
// The input is what the C sample's rand() gives on Linux (glibc's generator, never seeded), so
// both programs sum the same numbers in the same order and print the same sums. The printed
// time covers what the C sample's timer covers: the work queued on the GPUs, waiting for it,
// the host's sums and freeing each GPU's buffers, not the allocations and the input before.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"sync/atomic"
	"time"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/examples/internal/sample"
	"github.com/gpuactor/gpuactor/group"
	"github.com/gpuactor/gpuactor/sim"
	"github.com/gpuactor/gpuactor/streams"
)

// The sample's sizes: the input, the most GPUs it uses, and the reduction's launch shape,
// whose every thread leaves one partial sum.
const (
	maxGPUCount = 32
	dataN       = 1048576 * 32
	blockN      = 32
	threadN     = 256
	accumN      = blockN * threadN
)

// source is simpleMultiGPU's kernel: each thread sums the elements tid, tid + threadN, … and
// writes its sum to d_Result[tid].
const source = `
extern "C" __global__ void reduceKernel(float* d_Result, const float* d_Input, int N) {
    const int tid = blockIdx.x * blockDim.x + threadIdx.x;
    const int threadN = gridDim.x * blockDim.x;
    float sum = 0;
    for (int pos = tid; pos < N; pos += threadN)
        sum += d_Input[pos];
    d_Result[tid] = sum;
}
`

// simKernels is reduceKernel for the simulator: the same float32 additions in the same order,
// so each partial sum is bit for bit the GPU's.
var simKernels = map[string]cuda.SimKernel{
	"reduceKernel": func(c *cuda.KernelCall) error {
		n := int(c.Int32(2))
		threads := int(c.Threads())
		result := cuda.SimSlice[float32](c, 0, threads)
		input := cuda.SimSlice[float32](c, 1, n)
		for tid := range threads {
			var sum float32
			for pos := tid; pos < n; pos += threads {
				sum += input[pos]
			}
			result[tid] = sum
		}
		return nil
	},
}

type config struct {
	sample.Flags
	sim    *sim.Simulator // the simulated machine to use instead of the default one (tests)
	phases io.Writer      // where to write each GPU's phases (-phases); nil: nowhere
}

func main() {
	var c config
	c.RegisterBackend()
	phases := flag.Bool("phases", false, "after the run, write to stderr when each GPU's phases of the timed part ended and the watermarks its tracker recorded meanwhile")
	flag.Parse()
	if *phases {
		c.phases = os.Stderr
	}
	sample.Finish(run(c))
}

// plan is one GPU's part of the work, as the C sample's TGPUplan.
type plan struct {
	dev            *device.Device
	kern           *device.Kernel
	n              int                // elements of the input this GPU sums
	hData          *device.HostBuffer // its input, pinned
	dData, dSum    *device.Buffer     // its input and partial sums on the GPU
	hSumFromDevice *device.HostBuffer // the partial sums copied back, pinned
	sum            float32            // the partial sums added up on the host
	taken          atomic.Bool        // a job has run the plan

	// The timed part's phases (-phases): when each ended, from the timer's start, and the
	// device's tracker counters at the start.
	start  time.Time
	ends   [phaseN]time.Duration
	before device.TrackerStats
}

// The phases of a plan's timed part: the copies and the kernel awaited, the host's sum, and
// each of the three frees.
const (
	phaseWaited = iota
	phaseSummed
	phaseFreedHost
	phaseFreedSum
	phaseFreedData
	phaseN
)

var phaseNames = [phaseN]string{"awaited", "summed", "cudaFreeHost", "cudaFree(sum)", "cudaFree(data)"}

// mark notes that phase i ended now.
func (p *plan) mark(i int) { p.ends[i] = time.Since(p.start) }

func run(c config) (err error) {
	ctx := context.Background()
	fmt.Println("Starting simpleMultiGPU")
	opts := c.OptionsOn(c.sim)
	devs, err := device.OpenAll(ctx, opts...)
	if err != nil {
		return err
	}
	defer sample.CloseAll(&err, devs)
	gpus := devs[:min(len(devs), maxGPUCount)] // the C sample ignores GPUs past the 32nd
	fmt.Printf("CUDA-capable device count: %d\n", len(gpus))
	for _, d := range gpus {
		sample.Describe(d)
	}
	fmt.Print("Generating input data...\n\n")

	// Every GPU gets dataN / GPUs elements, and the first dataN % GPUs one more.
	plans := make([]*plan, len(gpus))
	byDevice := map[*device.Device]*plan{}
	for i, d := range gpus {
		plans[i] = &plan{dev: d, n: dataN / len(gpus)}
		if i < dataN%len(gpus) {
			plans[i].n++
		}
		byDevice[d] = plans[i]
	}

	// One stream per GPU, which the group owns. Round robin puts one of as many jobs as there
	// are GPUs on each GPU, though not the i-th on GPU i: a job looks its plan up by device.
	g, err := group.New(ctx, gpus, group.WithPolicy(group.RoundRobin), group.WithStreams(1))
	if err != nil {
		return err
	}
	// A no-op after the Close below, but not on early returns.
	defer sample.Keep(&err, func() error { return g.Close(ctx) })

	// Allocate, and fill the input in plan order: the C sample draws it from one rand()
	// sequence, GPU after GPU.
	rng := sample.NewCRand()
	for _, p := range plans {
		defer sample.Keep(&err, func() error { return p.free(ctx, true) })
		if err := p.prepare(ctx); err != nil {
			return err
		}
		in := device.HostSlice[float32](p.hData)
		for j := range in {
			in[j] = float32(rng.Next()) / float32(math.MaxInt32) // float division, as in C
		}
	}

	fmt.Printf("Computing with %d GPUs...\n", len(gpus))
	start := time.Now()
	for _, p := range plans {
		p.start, p.before = start, p.dev.Stats().Tracker
	}
	// Each job runs the plan of the device the group put it on.
	for range plans {
		g.Go(ctx, func(ctx context.Context, d *device.Device, s *streams.Stream) error {
			p := byDevice[d]
			if p.taken.Swap(true) {
				return fmt.Errorf("device %d was given a second job", d.Ordinal())
			}
			return p.reduce(ctx, s)
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	// The C sample destroys its streams inside the timed part; closing the group does.
	if err := g.Close(ctx); err != nil {
		return err
	}
	var sumGPU float32
	for _, p := range plans {
		sumGPU += p.sum
	}
	elapsed := time.Since(start)
	fmt.Printf("  GPU Processing time: %f (ms)\n\n", float64(elapsed)/float64(time.Millisecond))
	if c.phases != nil {
		writePhases(c.phases, plans, elapsed)
	}

	// The reference: every input element added in double precision, in the same order.
	fmt.Print("Computing with Host CPU...\n\n")
	var sumCPU float64
	for _, p := range plans {
		for _, v := range device.HostSlice[float32](p.hData) {
			sumCPU += float64(v)
		}
	}

	fmt.Println("Comparing GPU and Host CPU results...")
	diff, err := compare(sumGPU, sumCPU)
	fmt.Printf("  GPU sum: %f\n  CPU sum: %f\n", float64(sumGPU), sumCPU)
	fmt.Printf("  Relative difference: %E \n\n", diff)
	return err
}

// compare is the sample's check: the GPUs' sum passes when it differs from the host's by
// less than 1e-5 relative. A NaN difference (a zero host sum) fails, as in the C sample.
func compare(sumGPU float32, sumCPU float64) (diff float64, err error) {
	diff = math.Abs(sumCPU-float64(sumGPU)) / math.Abs(sumCPU)
	if !(diff < 1e-5) {
		return diff, fmt.Errorf("relative difference %E is not below 1e-5", diff)
	}
	return diff, nil
}

// prepare compiles the kernel on the plan's device (a module belongs to one device; the compiles
// after the first hit the cache) and allocates its buffers there.
func (p *plan) prepare(ctx context.Context) (err error) {
	mod, err := p.dev.Compile(ctx, device.Source{Name: "simplemultigpu.cu", Code: source, Sim: simKernels})
	if err != nil {
		return err
	}
	if p.kern, err = mod.Kernel(ctx, "reduceKernel"); err != nil {
		return err
	}
	if p.dData, err = p.dev.MallocBytes(ctx, uint64(4*p.n)); err != nil {
		return err
	}
	if p.dSum, err = p.dev.MallocBytes(ctx, 4*accumN); err != nil {
		return err
	}
	if p.hSumFromDevice, err = p.dev.MallocPinnedBytes(ctx, 4*accumN); err != nil {
		return err
	}
	p.hData, err = p.dev.MallocPinnedBytes(ctx, uint64(4*p.n))
	return err
}

// reduce runs the plan on stream s of its device: the copy up, the kernel and the copy back
// are queued at once and waited for together, then the host adds the partial sums and frees
// the GPU's buffers, as the C sample does.
func (p *plan) reduce(ctx context.Context, s *streams.Stream) error {
	cfg := cuda.LaunchConfig{Grid: cuda.Dim(blockN), Block: cuda.Dim(threadN)}
	if err := actor.WaitAll(ctx,
		s.CopyHostToDevice(ctx, p.dData, p.hData),
		s.Launch(ctx, p.kern, cfg, p.dSum, p.dData, int32(p.n)),
		s.CopyDeviceToHost(ctx, p.hSumFromDevice, p.dSum)); err != nil {
		return fmt.Errorf("device %d: %w", p.dev.Ordinal(), err)
	}
	p.mark(phaseWaited)
	var sum float32 // float, as the sample adds them
	for _, v := range device.HostSlice[float32](p.hSumFromDevice) {
		sum += v
	}
	p.sum = sum
	p.mark(phaseSummed)
	return p.free(ctx, false)
}

// writePhases writes, per GPU, when each phase of its timed part ended and the watermarks and
// queries its tracker made from the timer's start (the group's Close, which destroys the
// streams, included), then the whole.
func writePhases(w io.Writer, plans []*plan, elapsed time.Duration) {
	ms := func(d time.Duration) string { return fmt.Sprintf("%.3f", float64(d)/float64(time.Millisecond)) }
	for _, p := range plans {
		fmt.Fprintf(w, "phases: device %d:", p.dev.Ordinal())
		for i, end := range p.ends {
			fmt.Fprintf(w, " %s %s ms;", phaseNames[i], ms(end))
		}
		after := p.dev.Stats().Tracker
		fmt.Fprintf(w, " watermarks %d, queries %d\n", after.Watermarks-p.before.Watermarks, after.Queries-p.before.Queries)
	}
	fmt.Fprintf(w, "phases: all, the streams destroyed: %s ms\n", ms(elapsed))
}

// free closes the plan's buffers that are still open: those of the GPU's side, and with input
// also the input, which the host's reference sum reads after the GPUs are done.
func (p *plan) free(ctx context.Context, input bool) error {
	var errs []error
	if p.hSumFromDevice != nil {
		errs = append(errs, p.hSumFromDevice.Close(ctx))
		p.hSumFromDevice = nil
		p.mark(phaseFreedHost)
	}
	for i, b := range []**device.Buffer{&p.dSum, &p.dData} {
		if *b != nil {
			errs = append(errs, (*b).Close(ctx))
			*b = nil
			p.mark(phaseFreedSum + i)
		}
	}
	if input && p.hData != nil {
		errs = append(errs, p.hData.Close(ctx))
		p.hData = nil
	}
	return errors.Join(errs...)
}
