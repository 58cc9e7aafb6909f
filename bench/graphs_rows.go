package main

import (
	"context"
	"fmt"
	"time"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/graphs"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
	"github.com/gpuactor/gpuactor/streams"
)

// graphNodeCounts are the sizes of the graph rows: chains of that many empty kernel nodes.
var graphNodeCounts = []int64{1, 10, 100, 1000}

// graphLaunches is how many launches one repeat of a launch row issues.
const graphLaunches = 100

// graphScenarios are the CUDA graph rows, each against the C++ row of the same name and size:
//
//   - graph_instantiate: instantiating a chain of N empty kernels (us);
//   - graph_launch: the host's cost of one launch, from the call until the actor has enqueued
//     it on the GPU, read on the actor (us/launch);
//   - graph_node: the time per node of launches run back to back (us/node; target ≤ 1.05×);
//   - graph_node_launchn: graph_node's launches queued by one Exec.LaunchN, against the same
//     C++ row (a C++ replay loop is what LaunchN does on the actor thread);
//   - graph_update_launch: rebinding a kernel node's argument and launching, in a loop
//     (us/iteration), through a Template.
func graphScenarios() []scenario {
	var out []scenario
	for _, n := range graphNodeCounts {
		out = append(out,
			scenario{name: "graph_instantiate", nodes: true, unit: "us", size: n, run: graphInstantiate},
			scenario{name: "graph_launch", nodes: true, unit: "us/launch", size: n, run: traced("graph_launch", graphLaunchCost)},
			scenario{name: "graph_node", nodes: true, unit: "us/node", size: n, run: traced("graph_node", graphNodeTime(launchEach))},
			scenario{name: "graph_node_launchn", nodes: true, unit: "us/node", size: n, ref: "graph_node", run: traced("graph_node_launchn", graphNodeTime(launchAll))})
	}
	return append(out, scenario{name: "graph_update_launch", unit: "us/iter", size: 1, run: graphUpdateLaunch})
}

// emptyChain builds a graph of n empty kernels, each after the previous one.
func emptyChain(e *env, n int64) (*graphs.Graph, error) {
	g, err := graphs.New(e.ctx, e.dev)
	if err != nil {
		return nil, err
	}
	var prev *graphs.Node
	for range n {
		deps := graphs.After()
		if prev != nil {
			deps = graphs.After(prev)
		}
		if prev, err = g.AddKernel(e.ctx, deps, e.empty, one); err != nil {
			return nil, err
		}
	}
	return g, nil
}

func graphInstantiate(e *env, n int64, repeat int) (float64, *float64, error) {
	g, err := emptyChain(e, n)
	if err != nil {
		return 0, nil, err
	}
	defer g.Close(e.ctx)
	var samples []float64
	for r := -1; r < repeat; r++ {
		start := time.Now()
		x, err := g.Instantiate(e.ctx)
		dt := time.Since(start)
		if err != nil {
			return 0, nil, err
		}
		if err := x.Close(e.ctx); err != nil {
			return 0, nil, err
		}
		if r >= 0 {
			samples = append(samples, float64(dt.Nanoseconds())/1e3)
		}
	}
	return median(samples), nil, nil
}

// graphStream is the one stream every graph row uses, made by the first. Graphs run a third
// slower per node in a process that has used more than two streams, in C++ too
// (bench/results/FINDINGS.md), and the C++ baseline runs its graph rows on its only stream,
// so gpuactor's graph rows run first (scenarios) and use only the device's stream and this
// one.
func (e *env) graphStream() (*streams.Stream, error) {
	if e.graphs == nil {
		s, err := streams.New(e.ctx, e.dev)
		if err != nil {
			return nil, err
		}
		e.graphs = s
	}
	return e.graphs, nil
}

// launchSetup instantiates a chain of n on the graph rows' stream; release destroys it.
func launchSetup(e *env, n int64) (*graphs.Exec, *streams.Stream, func(), error) {
	g, err := emptyChain(e, n)
	if err != nil {
		return nil, nil, nil, err
	}
	x, err := g.Instantiate(e.ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	s, err := e.graphStream()
	if err != nil {
		return nil, nil, nil, err
	}
	return x, s, func() {
		_ = s.Synchronize(e.ctx)
		_ = x.Close(e.ctx)
		_ = g.Close(e.ctx)
	}, nil
}

func graphLaunchCost(e *env, n int64, repeat int) (float64, *float64, error) {
	x, s, release, err := launchSetup(e, n)
	if err != nil {
		return 0, nil, err
	}
	defer release()
	futs := make([]*streams.Future, graphLaunches)
	var samples []float64
	for r := -1; r < repeat; r++ {
		start := time.Now()
		for i := range futs {
			futs[i] = x.Launch(e.ctx, s)
		}
		// The actor runs its mailbox in order: once this no-op has run, every launch before it
		// has been enqueued on the GPU. It reads the clock there, so that the figure stops when
		// the actor is done, not when this goroutine wakes from waiting (a round outlasts
		// Await's spin, and the wake-up would add ~0.35 µs a launch that is no launch's cost).
		enqueued, err := core.Run(e.ctx, (*core.Device)(e.dev), func(backend.Device, *core.Tracker) (time.Time, error) {
			return time.Now(), nil
		}).Await(e.ctx)
		if err != nil {
			return 0, nil, err
		}
		dt := enqueued.Sub(start)
		for _, f := range futs {
			if _, err := f.Await(e.ctx); err != nil {
				return 0, nil, err
			}
		}
		if r >= 0 {
			samples = append(samples, float64(dt.Nanoseconds())/1e3/graphLaunches)
		}
	}
	return median(samples), nil, nil
}

// graphNodeTime times rounds of graphLaunches runs of a chain of n, queued by round, per node.
func graphNodeTime(round func(e *env, x *graphs.Exec, s *streams.Stream) error) func(*env, int64, int) (float64, *float64, error) {
	return func(e *env, n int64, repeat int) (float64, *float64, error) {
		x, s, release, err := launchSetup(e, n)
		if err != nil {
			return 0, nil, err
		}
		defer release()
		var samples []float64
		for r := -1; r < repeat; r++ {
			start := time.Now()
			if err := round(e, x, s); err != nil {
				return 0, nil, err
			}
			if r >= 0 {
				samples = append(samples, float64(time.Since(start).Nanoseconds())/1e3/float64(graphLaunches*n))
			}
		}
		return median(samples), nil, nil
	}
}

// launchEach is graph_node's round: a Launch per run, at most 64 in flight.
func launchEach(e *env, x *graphs.Exec, s *streams.Stream) error {
	return inFlight(e, graphLaunches, func() *actor.Future[struct{}] { return x.Launch(e.ctx, s) })
}

// launchAll is graph_node_launchn's round: one LaunchN.
func launchAll(e *env, x *graphs.Exec, s *streams.Stream) error {
	_, err := x.LaunchN(e.ctx, s, graphLaunches).Await(e.ctx)
	return err
}

const argKernelSource = `extern "C" __global__ void empty_arg(int x) {}`

var argKernelSim = map[string]cuda.SimKernel{"empty_arg": func(*cuda.KernelCall) error { return nil }}

func graphUpdateLaunch(e *env, _ int64, repeat int) (float64, *float64, error) {
	mod, err := e.dev.Compile(e.ctx, device.Source{Name: "empty_arg.cu", Code: argKernelSource, Sim: argKernelSim})
	if err != nil {
		return 0, nil, err
	}
	defer mod.Close(context.WithoutCancel(e.ctx))
	k, err := mod.Kernel(e.ctx, "empty_arg")
	if err != nil {
		return 0, nil, err
	}
	s, err := e.graphStream()
	if err != nil {
		return 0, nil, err
	}
	var slot graphs.Slot
	tpl, err := graphs.Record(e.ctx, s, func(ctx context.Context, r *graphs.Recorder) error {
		var err error
		slot, err = r.Launch(ctx, k, one, int32(0))
		return err
	})
	if err != nil {
		return 0, nil, err
	}
	defer tpl.Close(e.ctx)
	const iters = 2000
	var samples []float64
	for r := -1; r < repeat; r++ {
		start := time.Now()
		i := int32(0)
		if err := inFlight(e, iters, func() *actor.Future[struct{}] {
			i++
			return tpl.Launch(e.ctx, s, graphs.Args(slot, i))
		}); err != nil {
			return 0, nil, fmt.Errorf("update+launch: %w", err)
		}
		if r >= 0 {
			samples = append(samples, float64(time.Since(start).Nanoseconds())/1e3/iters)
		}
	}
	return median(samples), nil, nil
}
