// Command simplestreams is NVIDIA's simpleStreams sample done the gpuactor way: it runs the
// same work — copy an array of ints to the GPU, add a factor to every element a few times,
// copy it back — first on one stream, then split over several streams so that one chunk's
// copies overlap another chunk's kernel, and times both with events. Every element is
// checked. It prints the timings and PASS or FAIL.
//
//	go run ./examples/simplestreams -n 16777216 -streams 4
//	go run ./examples/simplestreams -backend sim -n 1048576
//
// Each stream operation returns a future at once; the program queues everything, then waits
// only for the last event. Copies that overlap with kernels need pinned host memory, and an
// async copy moves a whole HostBuffer (from its start), so the streamed variant gives each
// chunk a pinned buffer of its own.
package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/examples/internal/sample"
	"github.com/gpuactor/gpuactor/streams"
)

// source is simpleStreams' kernel, with a bound on n so that any array length works.
const source = `
extern "C" __global__ void init_array(int* g_data, const int* factor, int num_iterations, int n) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= n) return;
    for (int i = 0; i < num_iterations; i++) {
        g_data[idx] += *factor;
    }
}
`

// simKernels is init_array for the simulator: the same arithmetic, in Go.
var simKernels = map[string]cuda.SimKernel{
	"init_array": func(c *cuda.KernelCall) error {
		n := int(c.Int32(3))
		iters := int(c.Int32(2))
		data := cuda.SimSlice[int32](c, 0, n)
		factor := cuda.SimSlice[int32](c, 1, 1)[0]
		for i := range min(uint64(n), c.Threads()) {
			for range iters {
				data[i] += factor
			}
		}
		return nil
	},
}

// threads is the block size, as in the sample.
const threads = 512

type config struct {
	n          int // elements in the array
	nstreams   int // streams of the streamed variant
	iterations int // additions per element per kernel launch
	reps       int // passes timed per variant
	factor     int // what each addition adds
	sample.Flags
}

func main() {
	var c config
	flag.IntVar(&c.n, "n", 16<<20, "ints in the array")
	flag.IntVar(&c.nstreams, "streams", 4, "streams of the streamed variant")
	flag.IntVar(&c.iterations, "iterations", 5, "additions per element per kernel launch (num_iterations)")
	flag.IntVar(&c.reps, "reps", 10, "passes timed per variant (the printed times are per pass)")
	flag.IntVar(&c.factor, "factor", 5, "what each addition adds")
	c.Register()
	flag.Parse()
	sample.Finish(run(c))
}

func run(c config) (err error) {
	if c.n <= 0 || c.nstreams <= 0 || c.iterations < 0 || c.reps <= 0 {
		return fmt.Errorf("-n, -streams and -reps must be positive, -iterations not negative")
	}
	if c.nstreams > c.n {
		return fmt.Errorf("-streams %d is more than the %d elements", c.nstreams, c.n)
	}
	if int64(c.n)+int64(c.reps+1)*int64(c.factor)*int64(c.iterations) > 1<<31-1 {
		return fmt.Errorf("the results would overflow an int")
	}
	ctx := context.Background()
	dev, err := device.Open(ctx, c.Ordinal, c.Options()...)
	if err != nil {
		return err
	}
	defer sample.Keep(&err, dev.Close)
	sample.Describe(dev)
	fmt.Printf("array of %d ints (%.1f MiB), %d iteration(s) of +%d per kernel, %d pass(es) per variant\n",
		c.n, float64(4*c.n)/(1<<20), c.iterations, c.factor, c.reps)

	mod, err := dev.Compile(ctx, device.Source{Name: "simplestreams.cu", Code: source, Sim: simKernels})
	if err != nil {
		return err
	}
	defer sample.Keep(&err, func() error { return mod.Close(ctx) })
	kern, err := mod.Kernel(ctx, "init_array")
	if err != nil {
		return err
	}

	// Device memory: the array and the factor the kernel reads through a pointer.
	nbytes := uint64(4 * c.n)
	dA, err := dev.Malloc(ctx, nbytes)
	if err != nil {
		return err
	}
	defer sample.Keep(&err, func() error { return dA.Close(ctx) })
	dFactor, err := dev.Malloc(ctx, 4)
	if err != nil {
		return err
	}
	defer sample.Keep(&err, func() error { return dFactor.Close(ctx) })
	if err := streams.CopyToDevice(ctx, streams.Default(dev), dFactor, []int32{int32(c.factor)}).Wait(ctx); err != nil {
		return err
	}

	// Pinned host memory: the whole array for the non-streamed variant, and one buffer per
	// chunk for the streamed one.
	whole, err := dev.MallocHost(ctx, nbytes)
	if err != nil {
		return err
	}
	defer sample.Keep(&err, func() error { return whole.Close(ctx) })
	chunks := split(c.n, c.nstreams)
	parts := make([]*device.HostBuffer, len(chunks))
	for i, ch := range chunks {
		if parts[i], err = dev.MallocHost(ctx, uint64(4*ch.len)); err != nil {
			return err
		}
		defer sample.Keep(&err, func() error { return parts[i].Close(ctx) })
	}
	a := device.HostSlice[int32](whole)
	for i := range a {
		a[i] = initial(i)
	}
	for i, ch := range chunks {
		part := device.HostSlice[int32](parts[i])
		for j := range part {
			part[j] = initial(ch.off + j)
		}
	}

	ss := make([]*streams.Stream, c.nstreams)
	for i := range ss {
		if ss[i], err = streams.New(ctx, dev); err != nil {
			return err
		}
		defer sample.Keep(&err, func() error { return ss[i].Close(ctx) })
	}
	// Timing events, and untimed ones (cheaper) that only join the streams back together.
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
	var marks [4]*streams.Event
	for i := range marks {
		if marks[i], err = newEvent(); err != nil {
			return err
		}
	}
	joins := make([]*streams.Event, c.nstreams)
	for i := range joins {
		if joins[i], err = newEvent(streams.DisableTiming); err != nil {
			return err
		}
	}

	launch := func(s *streams.Stream, m device.Mem, n, iterations int) *streams.Future {
		cfg := cuda.LaunchConfig{Grid: cuda.Dim(uint32((n + threads - 1) / threads)), Block: cuda.Dim(threads)}
		return s.Launch(ctx, kern, cfg, m, dFactor, int32(iterations), int32(n))
	}
	s0 := ss[0]

	// Warm-up, untimed: zero iterations leave the data alone, but the first launch pays for
	// loading the module.
	if err := launch(s0, dA, c.n, 0).Wait(ctx); err != nil {
		return err
	}

	// One pass with an event between the stages, like the sample's "memcopy" and "kernel"
	// lines: what an ideal overlap could bring the total down to.
	var ops []actor.Waiter
	ops = append(ops,
		s0.Record(ctx, marks[0]),
		s0.CopyHostToDevice(ctx, dA, whole),
		s0.Record(ctx, marks[1]),
		launch(s0, dA, c.n, c.iterations),
		s0.Record(ctx, marks[2]),
		s0.CopyDeviceToHost(ctx, whole, dA),
		s0.Record(ctx, marks[3]))
	if err := actor.WaitAll(ctx, ops...); err != nil {
		return err
	}
	var stage [3]time.Duration
	for i := range stage {
		if stage[i], err = streams.Elapsed(ctx, marks[i], marks[i+1]); err != nil {
			return err
		}
	}
	fmt.Printf("one pass on one stream:  H2D %s, kernel %s, D2H %s\n", ms(stage[0]), ms(stage[1]), ms(stage[2]))

	// (a) Non-streamed: every pass is H2D, kernel, D2H of the whole array on one stream.
	// Each pass uploads what the previous one brought back, so the additions accumulate.
	start, stop := marks[0], marks[3]
	ops = append(ops[:0], s0.Record(ctx, start))
	for range c.reps {
		ops = append(ops,
			s0.CopyHostToDevice(ctx, dA, whole),
			launch(s0, dA, c.n, c.iterations),
			s0.CopyDeviceToHost(ctx, whole, dA))
	}
	ops = append(ops, s0.Record(ctx, stop))
	if err := actor.WaitAll(ctx, ops...); err != nil {
		return err
	}
	nonStreamed, err := streams.Elapsed(ctx, start, stop)
	if err != nil {
		return err
	}
	nonStreamed /= time.Duration(c.reps)

	// (b) Streamed: each stream moves and processes its own chunk. The other streams first
	// wait for the start event (so the timing covers all their work), and the first stream
	// waits for the others' join events before recording stop. Work is issued breadth first
	// — every chunk's H2D, then every kernel, then every D2H — as the sample does: on a GPU
	// with one hardware queue that is what lets a copy run beside a kernel.
	ops = append(ops[:0], s0.Record(ctx, start))
	for _, s := range ss[1:] {
		ops = append(ops, s.Wait(ctx, start))
	}
	for range c.reps {
		for i, ch := range chunks {
			ops = append(ops, ss[i].CopyHostToDevice(ctx, ch.of(dA), parts[i]))
		}
		for i, ch := range chunks {
			ops = append(ops, launch(ss[i], ch.of(dA), ch.len, c.iterations))
		}
		for i, ch := range chunks {
			ops = append(ops, ss[i].CopyDeviceToHost(ctx, parts[i], ch.of(dA)))
		}
	}
	for i, s := range ss[1:] {
		ops = append(ops, s.Record(ctx, joins[i+1]), s0.Wait(ctx, joins[i+1]))
	}
	ops = append(ops, s0.Record(ctx, stop))
	if err := actor.WaitAll(ctx, ops...); err != nil {
		return err
	}
	streamed, err := streams.Elapsed(ctx, start, stop)
	if err != nil {
		return err
	}
	streamed /= time.Duration(c.reps)

	fmt.Printf("non-streamed: %s per pass\n", ms(nonStreamed))
	fmt.Printf("%d streams:    %s per pass (%.2fx)\n", c.nstreams, ms(streamed), float64(nonStreamed)/float64(max(streamed, 1)))

	// The whole array went through 1 + reps passes, every chunk through reps.
	add := func(passes int) int32 { return int32(passes * c.factor * c.iterations) }
	if err := check("non-streamed", a, 0, add(1+c.reps)); err != nil {
		return err
	}
	for i, ch := range chunks {
		if err := check(fmt.Sprintf("stream %d", i), device.HostSlice[int32](parts[i]), ch.off, add(c.reps)); err != nil {
			return err
		}
	}
	fmt.Printf("verified %d elements of each variant\n", c.n)
	return nil
}

// initial is element i's value before any kernel ran.
func initial(i int) int32 { return int32(i) }

// check compares got, which holds elements off, off+1, … of the array, with their initial
// values plus add.
func check(what string, got []int32, off int, add int32) error {
	for j, v := range got {
		if want := initial(off+j) + add; v != want {
			return fmt.Errorf("%s: element %d is %d, want %d", what, off+j, v, want)
		}
	}
	return nil
}

// chunk is the range [off, off+len) of the array's elements.
type chunk struct{ off, len int }

// of is the chunk's part of the device array.
func (c chunk) of(m device.Mem) device.Slice {
	return device.Range(m, uint64(4*c.off), uint64(4*c.len))
}

// split divides n elements into k chunks whose lengths differ by at most one.
func split(n, k int) []chunk {
	out := make([]chunk, k)
	for i := range out {
		lo, hi := i*n/k, (i+1)*n/k
		out[i] = chunk{lo, hi - lo}
	}
	return out
}

// ms formats a duration in milliseconds, as the sample prints its timings.
func ms(d time.Duration) string { return fmt.Sprintf("%.3f ms", float64(d)/float64(time.Millisecond)) }
