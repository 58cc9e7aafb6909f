// Command fanout runs a batch of independent jobs over every device with package group,
// showing their progress as it goes. Each job makes its own input from its index, uploads it,
// runs a CUDA kernel over it on the device the group placed it on, downloads the result and
// checks every element against the same arithmetic done in Go; a mismatch fails the job.
//
// On a terminal it redraws a progress bar and one line per device in place, ten times a
// second; otherwise (a pipe, a file, CI) it prints a plain progress line about every second.
// It ends with a summary — jobs, failures, time, jobs/s, each device's share — and PASS, or
// FAIL with exit status 1 when a job failed or it was interrupted. Ctrl-C cancels the jobs
// still queued, lets the running ones end, and still prints the summary.
//
//	go run ./examples/fanout -jobs 2000 -n 1048576 -policy least
//	go run ./examples/fanout -sim 4 -slow 3 -policy rr   # four simulated devices, one slow
//
// Without a GPU, or with -sim N, it runs on the simulator.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/examples/internal/sample"
	"github.com/gpuactor/gpuactor/group"
	"github.com/gpuactor/gpuactor/sim"
	"github.com/gpuactor/gpuactor/streams"
)

// config is the command line: the batch, the placement, the devices and the display.
type config struct {
	jobs      int
	n         int // elements per job
	rounds    int // rounds of the mix per element
	perDevice int // streams per device: jobs running at once on each
	policy    string
	sim       int     // simulated devices instead of the backend's; 0: the backend's
	slow      float64 // with sim: how many times slower simulated device 0 runs
	park      bool    // the actors park instead of spinning
	tick      time.Duration
	plain     time.Duration // how often the plain (not a terminal) mode prints a line
	sample.Flags
}

// main reads the flags, runs the batch until it ends or Ctrl-C, and exits 1 on failure.
func main() {
	var c config
	flag.IntVar(&c.jobs, "jobs", 2000, "jobs in the batch")
	flag.IntVar(&c.n, "n", 1<<20, "elements (uint32) per job")
	flag.IntVar(&c.rounds, "rounds", 4, "rounds of the kernel's mix per element")
	flag.IntVar(&c.perDevice, "streams", 4, "streams per device: jobs running at once on each")
	flag.StringVar(&c.policy, "policy", "least", "placement: least (fewest outstanding jobs), rr (round robin) or memory")
	flag.IntVar(&c.sim, "sim", 0, "run on this many simulated devices instead of the GPUs (0: the -backend's devices)")
	flag.Float64Var(&c.slow, "slow", 1, "with -sim: simulated device 0 runs this many times slower, to see how the policy spreads work")
	flag.BoolVar(&c.park, "park", false, "actors park instead of spinning: less CPU, more latency per operation")
	flag.DurationVar(&c.tick, "tick", 100*time.Millisecond, "how often the progress redraws on a terminal")
	flag.DurationVar(&c.plain, "every", time.Second, "how often a progress line is printed when not on a terminal")
	c.RegisterBackend()
	flag.Parse()
	// Ctrl-C or SIGTERM cancels ctx: queued jobs leave, running ones see their context end.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	sample.Finish(run(ctx, c, os.Stdout))
}

// parsePolicy turns -policy into a group.Policy.
func parsePolicy(s string) (group.Policy, error) {
	switch s {
	case "least":
		return group.LeastOutstanding, nil
	case "rr":
		return group.RoundRobin, nil
	case "memory":
		return group.Memory, nil
	}
	return 0, fmt.Errorf("-policy %q: want least, rr or memory", s)
}

// run opens the devices, loads the kernel's program on each, runs c.jobs jobs over them with a
// group while showing progress on out, and prints the summary. It fails when a job failed,
// and with ctx's error when ctx ended first.
func run(ctx context.Context, c config, out io.Writer) (err error) {
	// The grid is one thread an element, indexed by a 32-bit unsigned int in the kernel.
	if c.jobs <= 0 || c.n <= 0 || c.n > 1<<30 || c.rounds < 0 || c.perDevice <= 0 || c.sim < 0 {
		return errors.New("-jobs, -streams and -n (at most 1<<30) must be positive, -rounds and -sim not negative")
	}
	if c.tick <= 0 || c.plain <= 0 {
		return errors.New("-tick and -every must be positive")
	}
	pol, err := parsePolicy(c.policy)
	if err != nil {
		return err
	}
	opts := c.Options()
	if c.sim > 0 {
		if c.Backend != "" && c.Backend != string(device.BackendSim) {
			return fmt.Errorf("-sim %d and -backend %s: the simulated devices are the sim backend's", c.sim, c.Backend)
		}
		sopts := []sim.Option{sim.WithDevices(c.sim)}
		if c.slow > 1 {
			sopts = append(sopts, sim.WithSlowdown(0, c.slow))
		}
		opts = append(opts, device.WithSimulator(sim.New(sopts...)))
	}
	if c.park { // see the device package's "What the actor costs in CPU"
		opts = append(opts, device.WithActorTuning(device.ActorTuning{Spin: device.NoSpin, BusySpin: device.NoSpin, AwaitSpin: device.NoSpin}))
	}
	devs, err := device.OpenAll(ctx, opts...)
	if err != nil {
		return err
	}
	// Deferred first, so it runs last: the group uses the devices' streams until it closes.
	defer sample.CloseAll(&err, devs)
	for _, d := range devs {
		p := d.Properties()
		fmt.Fprintf(out, "device %d: %s (compute %s, %s backend)\n", d.Ordinal(), p.Name, p.ComputeCapability, d.Backend())
	}
	// One program for every device: it compiles once per architecture and loads on each
	// device the first time a kernel of it is asked for there. The group's setup asks on every
	// device before it takes a job, so that a compile error stops the run here, not in a job.
	prog := device.NewProgram(source)
	defer sample.Keep(&err, func() error { return prog.Close(context.WithoutCancel(ctx)) })
	setup := func(ctx context.Context, d *device.Device) error {
		_, err := prog.Kernel(ctx, d, "mix")
		return err
	}
	g, err := group.New(ctx, devs, group.WithStreams(c.perDevice), group.WithPolicy(pol), group.WithSetup(setup))
	if err != nil {
		return err
	}
	// Closed before the program (defers run last first), even when ctx was cancelled.
	defer sample.Keep(&err, func() error { return g.Close(context.WithoutCancel(ctx)) })
	fmt.Fprintf(out, "%d jobs of %d elements, %d rounds each, over %d devices, %d streams each, policy %s\n",
		c.jobs, c.n, c.rounds, len(devs), c.perDevice, pol)

	p := newProgress(out, isTerminal(out), c.jobs, devs, c.plain)
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(c.tick)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				p.update(g.Stats())
			}
		}
	}()

	// Every job declares the device memory it allocates: the Memory policy places by it.
	bytes := group.Bytes(uint64(c.n) * 4)
	// The group counts a job failed whatever its error, and ctx's end fails the jobs it catches
	// running or about to run; what failed by its result is counted here, to tell them apart.
	var bad atomic.Int64
	for i := range c.jobs {
		if ctx.Err() != nil {
			break // the rest would fail at once: submitting them is wasted work
		}
		// Go waits while the group's queue is full, within ctx: the batch never sits in
		// memory all at once, and the submission loop paces itself on the devices.
		g.Go(ctx, func(ctx context.Context, d *device.Device, s *streams.Stream) error {
			// The kernel of the device the job landed on: loaded already, by the setup.
			k, err := prog.Kernel(ctx, d, "mix")
			if err == nil {
				err = runJob(ctx, s, k, i, c.n, c.rounds)
			}
			if err != nil && (ctx.Err() == nil || !errors.Is(err, ctx.Err())) {
				bad.Add(1)
			}
			return err
		}, bytes)
	}
	waitErr := g.Wait()
	elapsed := time.Since(p.start)
	close(stop)
	<-stopped // the progress goroutine writes to out: it must be done before we do
	st := g.Stats()
	p.finish(st)
	p.summary(st, int(bad.Load()), elapsed)

	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("interrupted: %w", ctx.Err())
	case bad.Load() > 0:
		return fmt.Errorf("%d of %d jobs failed; the first: %w", bad.Load(), c.jobs, waitErr)
	}
	return waitErr // a job the group could not place (no healthy device left, say)
}

// runJob is job number idx on stream s: its input, made from idx, goes to the device, the
// kernel mixes it, and the result comes back to be checked element by element.
func runJob(ctx context.Context, s *streams.Stream, k *device.Kernel, idx, n, rounds int) (err error) {
	x := input(idx, n)
	key := jobKey(idx)
	buf, _, err := alloc.MallocAsync[uint32](ctx, s, n)
	if err != nil {
		return fmt.Errorf("job %d: %w", idx, err)
	}
	// The free is queued whatever happened to ctx: with an ended ctx Close would refuse it, and
	// the buffer would stay allocated until the device closes.
	defer sample.Keep(&err, func() error { return buf.Close(context.WithoutCancel(ctx)) })
	got := make([]uint32, n)
	cfg := cuda.LaunchConfig{Grid: cuda.Dim(uint32((n + 255) / 256)), Block: cuda.Dim(256)}
	streams.CopyToDevice(ctx, s, buf, x)
	s.Launch(ctx, k, cfg, buf, uint32(n), key, uint32(rounds))
	// A stream's work fails in order: the last copy's future carries any earlier error.
	if err := streams.CopyFromDevice(ctx, s, got, buf).Wait(ctx); err != nil {
		return fmt.Errorf("job %d: %w", idx, err)
	}
	for i, v := range x {
		if want := mix(v, key, uint32(rounds)); got[i] != want {
			return fmt.Errorf("job %d, element %d: got %#x, want %#x", idx, i, got[i], want)
		}
	}
	return nil
}

// input is job idx's data: distinct for every job and element, and the same on every run,
// so that a failure can be reproduced by its job number.
func input(idx, n int) []uint32 {
	x := make([]uint32, n)
	seed := uint32(idx)*0x9E3779B9 + 1
	for i := range x {
		x[i] = seed ^ uint32(i)*0x85EBCA6B
	}
	return x
}

// jobKey is the kernel's key for job idx: each job mixes differently.
func jobKey(idx int) uint32 { return uint32(idx)*0xC2B2AE35 + 0x27D4EB2F }

// mix is the kernel's arithmetic on one element. Unsigned 32-bit multiplication, addition,
// xor and shift wrap the same in CUDA C++ and in Go, so the GPU's result and this one must
// be equal bit for bit: there is no rounding to allow for.
func mix(v, key, rounds uint32) uint32 {
	for r := range rounds {
		v ^= key + r
		v *= 0x9E3779B1
		v ^= v >> 15
	}
	return v
}

// source is the kernel, mix over n elements in place, one thread an element, with its Go
// twin for the simulator.
var source = device.Source{
	Name: "fanout.cu",
	Code: `
extern "C" __global__ void mix(unsigned int* x, unsigned int n, unsigned int key, unsigned int rounds) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned int v = x[i];
    for (unsigned int r = 0; r < rounds; r++) {
        v ^= key + r;
        v *= 0x9E3779B1u;
        v ^= v >> 15;
    }
    x[i] = v;
}
`,
	Sim: map[string]cuda.SimKernel{
		"mix": func(c *cuda.KernelCall) error {
			n := int(c.Uint32(1))
			key, rounds := c.Uint32(2), c.Uint32(3)
			x := cuda.SimSlice[uint32](c, 0, n)
			for i := range min(uint64(n), c.Threads()) {
				x[i] = mix(x[i], key, rounds)
			}
			return nil
		},
	},
}
