package main

import (
	"fmt"
	"io"
	"runtime"
	"slices"
	"time"
	"unsafe"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// The binding rows run the C++ baseline's loops for the launch-bound rows straight through
// gpuactor's binding, from one locked thread, with no actor: the floor that calling libcudart
// through purego puts under each row, measured in the same run (and rounds) as C++ and
// gpuactor. A gpuactor row's ratio over its binding row is what the actor, the futures and
// the completion tracking cost; the binding row's ratio is what the binding costs.
//
//   - binding_launch_enqueue: 20000 empty launches, then a synchronize (µs/launch);
//   - binding_h2d_async_64B: 20000 64-byte pinned-to-device copies, then a synchronize;
//   - binding_graph_node: 100 launches of a chain of 1 or 10 empty kernels, then a
//     synchronize (µs/node);
//   - binding_mallocasync_free_pair: 200 MallocAsync+FreeAsync pairs of 1 MiB, then a
//     synchronize (µs/pair).
func bindingScenarios() []scenario {
	out := []scenario{
		{name: "binding_launch_enqueue", unit: "us/launch", ref: "launch_enqueue", run: onBinding(bindingLaunches)},
		{name: "binding_h2d_async_64B", unit: "us/copy", size: 64, ref: "h2d_async_64B", run: onBinding(bindingSmallCopies)},
	}
	for _, n := range []int64{1, 10} {
		out = append(out, scenario{name: "binding_graph_node", nodes: true, unit: "us/node", size: n, ref: "graph_node", run: onBinding(bindingGraphNode)})
	}
	return append(out, scenario{name: "binding_mallocasync_free_pair", unit: "us/pair", size: 1 << 20, ref: "mallocasync_free", run: onBinding(bindingAllocPairs)})
}

// onBinding runs row on a direct device opened on a goroutine of its own, locked to its
// thread as the actor's is, so that the lock never leaks into the caller's.
func onBinding(row func(dd *direct, size int64, repeat int) (float64, error)) func(*env, int64, int) (float64, *float64, error) {
	return func(e *env, size int64, repeat int) (float64, *float64, error) {
		var (
			value float64
			err   error
			done  = make(chan struct{})
		)
		go func() {
			defer close(done)
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			var dd *direct
			if dd, err = e.binding(); err != nil {
				return
			}
			defer dd.close()
			value, err = row(dd, size, repeat)
		}()
		<-done
		return value, nil, err
	}
}

// timedRepeats runs batch once to warm up and then repeat times, each followed by a
// synchronize of dd's stream, and returns the median time per op in µs.
func timedRepeats(dd *direct, ops, repeat int, batch func() error) (float64, error) {
	var samples []float64
	for r := -1; r < repeat; r++ {
		start := time.Now()
		if err := batch(); err != nil {
			return 0, err
		}
		if err := dd.dev.StreamSynchronize(dd.stream); err != nil {
			return 0, err
		}
		if r >= 0 {
			samples = append(samples, float64(time.Since(start).Nanoseconds())/1e3/float64(ops))
		}
	}
	return median(samples), nil
}

func bindingLaunches(dd *direct, _ int64, repeat int) (float64, error) {
	const launches = 20000
	return timedRepeats(dd, launches, repeat, func() error {
		for range launches {
			if err := dd.dev.Launch(dd.empty, cuda.Dim(1), cuda.Dim(1), 0, dd.stream, nil); err != nil {
				return err
			}
		}
		return nil
	})
}

func bindingSmallCopies(dd *direct, size int64, repeat int) (float64, error) {
	const copies, slots = 20000, 1024
	src, err := dd.dev.HostAlloc(uint64(size*slots), backend.HostAllocDefault)
	if err != nil {
		return 0, err
	}
	defer dd.dev.HostFree(src)
	host := unsafe.Slice((*byte)(src), size*slots)
	fillPattern(host, 7)
	dst, err := dd.dev.Malloc(uint64(size))
	if err != nil {
		return 0, err
	}
	defer dd.dev.Free(dst)
	v, err := timedRepeats(dd, copies, repeat, func() error {
		for i := range copies {
			if err := dd.dev.CopyHtoD(dst, unsafe.Add(src, int64(i%slots)*size), uint64(size), dd.stream); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	// The device must hold the last copy's chunk, not just any.
	got := make([]byte, size)
	if err := dd.dev.CopyDtoH(unsafe.Pointer(&got[0]), dst, uint64(size), dd.stream); err != nil {
		return 0, err
	}
	if err := dd.dev.StreamSynchronize(dd.stream); err != nil {
		return 0, err
	}
	last := int64((copies - 1) % slots)
	return v, checkBytes(got, host[last*size:(last+1)*size])
}

func bindingGraphNode(dd *direct, n int64, repeat int) (float64, error) {
	g, err := dd.dev.GraphCreate()
	if err != nil {
		return 0, err
	}
	defer dd.dev.GraphDestroy(g)
	var deps []backend.GraphNode
	for range n {
		node, err := dd.dev.GraphAddKernelNode(g, deps, backend.KernelNode{Kernel: dd.empty, Grid: cuda.Dim(1), Block: cuda.Dim(1)})
		if err != nil {
			return 0, err
		}
		deps = []backend.GraphNode{node}
	}
	x, err := dd.dev.GraphInstantiate(g, 0)
	if err != nil {
		return 0, err
	}
	defer dd.dev.GraphExecDestroy(x)
	v, err := timedRepeats(dd, graphLaunches, repeat, func() error {
		for range graphLaunches {
			if err := dd.dev.GraphLaunch(x, dd.stream); err != nil {
				return err
			}
		}
		return nil
	})
	return v / float64(n), err
}

func bindingAllocPairs(dd *direct, size int64, repeat int) (float64, error) {
	const pairs = 200
	return timedRepeats(dd, pairs, repeat, func() error {
		for range pairs {
			p, err := dd.dev.MallocAsync(uint64(size), dd.stream)
			if err != nil {
				return err
			}
			if p == 0 {
				return fmt.Errorf("MallocAsync of %d bytes returned a null pointer", size)
			}
			if err := dd.dev.FreeAsync(p, dd.stream); err != nil {
				return err
			}
		}
		return nil
	})
}

// breakdowns are the quotients printBreakdown shows: a gpuactor row over another row of the
// same run and round, which splits a row's ratio to C++ into what each layer adds.
var breakdowns = []struct{ row, over, what string }{
	{"stream_launch", "launch_enqueue", "futures that complete when the GPU reaches them, over futures that complete at enqueue"},
	{"stream_h2d_async_64B", "h2d_async_64B", "futures that complete when the GPU reaches them, over futures that complete at enqueue"},
	{"launch_enqueue", "binding_launch_enqueue", "the actor"},
	{"h2d_async_64B", "binding_h2d_async_64B", "the actor"},
	{"graph_node", "binding_graph_node", "the actor, the futures and the tracking"},
	{"mallocasync_free_pair", "binding_mallocasync_free_pair", "the actor, the futures and the accounting"},
}

// printBreakdown writes, for each of breakdowns that ran on the GPU, the quotient of the two
// rows' figures in each round (all are times), as the median and range over rounds.
func printBreakdown(w io.Writer, rep *Report) {
	var lines []string
	for _, b := range breakdowns {
		var sizes []int64
		for _, a := range rep.Results {
			if a.Impl == "gpuactor" && a.Backend == "cuda" && a.Scenario == b.row && !slices.Contains(sizes, a.Size) {
				sizes = append(sizes, a.Size)
			}
		}
		for _, size := range sizes {
			r, _ := roundPairs(rep, "cuda", b.row, b.over, size, false)
			if len(r) == 0 {
				continue
			}
			label := b.row
			if size > 0 {
				label += " " + sizeLabel(size)
			}
			lines = append(lines, fmt.Sprintf("  %s ÷ %s: %.2f× (%s over %d round(s)) — %s", label, b.over, median(r), rangeLabel(slices.Min(r), slices.Max(r)), len(r), b.what))
		}
	}
	if len(lines) == 0 {
		return
	}
	fmt.Fprintln(w, "\n== where the time goes on cuda: a gpuactor row over another of the same round (the binding rows are the C++ loops through the binding, no actor)")
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
}
