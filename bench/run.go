package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"time"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/cudart"
	"github.com/gpuactor/gpuactor/sim"
)

// Meta describes where and when a run happened.
type Meta struct {
	Date     string   `json:"date"`
	GPU      string   `json:"gpu"`
	CC       string   `json:"compute_capability"`
	Driver   string   `json:"driver"`
	Runtime  string   `json:"runtime"`
	Go       string   `json:"go"`
	CPUs     int      `json:"cpus"`
	Repeat   int      `json:"repeat"`
	Backends []string `json:"backends"`
	// InProcess: the C++ baseline ran as a library in the bench's process, each row's passes
	// just before and after it (-inprocess), not as a program before and after all of them.
	InProcess bool `json:"inprocess,omitempty"`
	// CppThread: where the in-process C++ passes ran: "actor", the device actor's thread, or
	// "own", a thread of the bench's (-cpp-thread); empty in reports made before the flag's
	// default became actor, for own.
	CppThread string `json:"cpp_thread,omitempty"`
}

// Report is what -json and -save write.
type Report struct {
	Meta    Meta     `json:"meta"`
	Results []Result `json:"results"`
	Errors  []string `json:"errors,omitempty"`
	Skipped []string `json:"skipped,omitempty"` // rows the machine cannot run, and why
	// Summary is the GPU table's figures, medians and ratio ranges, as printed (summarize).
	Summary []Summary `json:"summary,omitempty"`
}

func run(ctx context.Context, o *options) error {
	rep := &Report{Meta: Meta{
		Date: time.Now().UTC().Format("2006-01-02"), Go: runtime.Version(), CPUs: runtime.NumCPU(), Repeat: o.repeat,
		InProcess: o.inprocess,
	}}
	rep.Meta.CppThread = o.cppThread
	kinds, err := backendsToRun(ctx, o.backend)
	if err != nil {
		return err
	}
	gpu := slices.Contains(kinds, device.BackendCUDA)
	if gpu {
		if err := probeMeta(ctx, o, rep); err != nil {
			return err
		}
		if !o.inprocess {
			runExternal(ctx, o, rep, 1)
		}
	}
	for _, kind := range kinds {
		if kind == device.BackendCUDA && o.inprocess {
			path, err := cbaselineLib(ctx, o, rep.Meta.CC)
			if err != nil {
				return err
			}
			lib, err := openCppLib(path)
			if err != nil {
				return err
			}
			if err := runInProcess(ctx, o, kind, lib, rep); err != nil {
				return err
			}
			continue
		}
		if kind != device.BackendCUDA {
			if err := runBackend(ctx, o, kind, 0, rep); err != nil {
				return err
			}
			continue
		}
		// Round r of gpuactor's rows runs between C++ passes r and r+1, so that each round
		// has a baseline measured around it, on a host whose speed drifts.
		for r := 1; r <= o.rounds; r++ {
			if err := runBackend(ctx, o, kind, o.roundNumber(r), rep); err != nil {
				return err
			}
			runExternal(ctx, o, rep, r+1)
		}
	}
	rep.Summary = summarize(rep)
	printTables(os.Stdout, rep)
	if o.jsonPath != "" {
		if err := writeJSON(o.jsonPath, rep); err != nil {
			return err
		}
	}
	if o.save {
		dir, err := save(o, rep)
		if err != nil {
			return err
		}
		fmt.Fprintln(os.Stderr, "results written to", dir)
	}
	if len(rep.Errors) > 0 {
		return fmt.Errorf("%d scenario(s) failed or failed their checks", len(rep.Errors))
	}
	return nil
}

func backendsToRun(ctx context.Context, which string) ([]device.BackendKind, error) {
	gpu := gpuPresent(ctx)
	switch which {
	case "sim":
		return []device.BackendKind{device.BackendSim}, nil
	case "cuda":
		if !gpu {
			return nil, errors.New("-backend cuda: no usable CUDA device")
		}
		return []device.BackendKind{device.BackendCUDA}, nil
	}
	if gpu {
		return []device.BackendKind{device.BackendSim, device.BackendCUDA}, nil
	}
	return []device.BackendKind{device.BackendSim}, nil
}

func runBackend(ctx context.Context, o *options, kind device.BackendKind, round int, rep *Report) error {
	for _, wq := range o.variants() {
		if err := runVariant(ctx, o, kind, round, wq, rep); err != nil {
			return err
		}
	}
	return nil
}

// runVariant runs gpuactor's rows on a device opened with waiter-query setting wq, their names
// suffixed when several settings run (-waiter-query).
func runVariant(ctx context.Context, o *options, kind device.BackendKind, round int, wq device.WaiterQuery, rep *Report) error {
	e, closeEnv, err := openEnv(ctx, o, kind, wq, rep)
	if err != nil {
		return err
	}
	defer closeEnv()
	todo := plan(o)
	prog := &progress{total: len(todo), start: time.Now()}
	from := len(rep.Results)
	for _, t := range todo {
		runTask(e, kind, t, round, o.repeat, rep, prog)
	}
	if suffix := o.suffixFor(wq); suffix != "" {
		for i := from; i < len(rep.Results); i++ {
			rep.Results[i].Scenario += suffix
		}
	}
	return nil
}

// openEnv opens the device the rows run on, with the empty kernel loaded; close closes it.
func openEnv(ctx context.Context, o *options, kind device.BackendKind, wq device.WaiterQuery, rep *Report) (e *env, close func(), err error) {
	opts := []device.Option{device.WithBackend(kind)}
	if kind == device.BackendSim && o.simDevices > 0 {
		opts = append(opts, device.WithSimulator(sim.New(sim.WithDevices(o.simDevices))))
	}
	if tuning := (device.ActorTuning{AwaitSpin: o.awaitSpin, WaiterQuery: wq}); tuning != (device.ActorTuning{}) {
		opts = append(opts, device.WithActorTuning(tuning))
	}
	dev, err := device.Open(ctx, o.device, opts...)
	if err != nil {
		return nil, nil, err
	}
	if !slices.Contains(rep.Meta.Backends, string(kind)) {
		rep.Meta.Backends = append(rep.Meta.Backends, string(kind))
	}
	k, err := loadEmpty(ctx, dev)
	if err != nil {
		return nil, nil, errors.Join(err, dev.Close())
	}
	e = &env{ctx: ctx, dev: dev, empty: k, binding: func() (*direct, error) { return openDirect(kind, o.device) }, copiers: o.copiers, devOpts: opts}
	return e, func() {
		e.closeIsolated()
		e.close()
	}, nil
}

// loadEmpty compiles the empty kernel on dev.
func loadEmpty(ctx context.Context, dev *device.Device) (*device.Kernel, error) {
	mod, err := dev.Compile(ctx, device.Source{Name: "empty.cu", Code: emptySource, Sim: emptySim})
	if err != nil {
		return nil, err
	}
	return mod.Kernel(ctx, "empty")
}

// runTask runs one row on e and records its result (and its failure) in rep.
func runTask(e *env, kind device.BackendKind, t task, round, repeat int, rep *Report, prog *progress) {
	if (t.s.name == "d2d" || t.s.name == "d2d_pitched" || t.s.name == "peer_copy") && kind == device.BackendSim {
		t.size = 64 << 20 // the simulator copies with the CPU: keep CI quick
	}
	prog.step(fmt.Sprintf("%s %s %s", kind, t.s.name, sizeLabel(t.size)))
	value, p99, err := t.s.run(e, t.size, repeat)
	if errors.Is(err, errSkipped) { // the machine lacks what the row needs: a note, no result
		rep.Skipped = append(rep.Skipped, fmt.Sprintf("gpuactor/%s %s: %v", kind, t.s.name, err))
		fmt.Fprintln(os.Stderr, "  skipped:", err)
		return
	}
	r := Result{Impl: "gpuactor", Backend: string(kind), Scenario: t.s.name, Size: t.size, Unit: t.s.unit,
		Value: value, P99: p99, Repeats: repeat, Checked: err == nil, Round: round, Devices: e.fanoutDevices(t.s.fanout)}
	if err != nil {
		rep.Errors = append(rep.Errors, fmt.Sprintf("gpuactor/%s %s %s: %v", kind, t.s.name, sizeLabel(t.size), err))
		fmt.Fprintln(os.Stderr, "  FAILED:", err)
	}
	rep.Results = append(rep.Results, r)
}

// probeMeta records the GPU's name and versions, which the C++ build needs before any
// gpuactor scenario has run.
func probeMeta(ctx context.Context, o *options, rep *Report) error {
	dev, err := device.Open(ctx, o.device, device.WithBackend(device.BackendCUDA))
	if err != nil {
		return err
	}
	defer dev.Close()
	p := dev.Properties()
	rep.Meta.GPU, rep.Meta.CC = p.Name, p.ComputeCapability.String()
	rep.Meta.Driver, rep.Meta.Runtime = cudart.FormatVersion(p.DriverVersion), cudart.FormatVersion(p.RuntimeVersion)
	return nil
}

type task struct {
	s    scenario
	size int64
}

func plan(o *options) []task {
	var out []task
	for _, s := range scenarios() {
		if !o.wants(s.name) || (s.optIn && o.scenarios == nil) || (s.nodes && o.graphSizes != nil && !slices.Contains(o.graphSizes, s.size)) {
			continue
		}
		if !s.sized {
			out = append(out, task{s, s.size})
			continue
		}
		for _, size := range o.sizes {
			out = append(out, task{s, size})
		}
	}
	return out
}

const emptySource = `extern "C" __global__ void empty() {}`

var emptySim = map[string]cuda.SimKernel{"empty": func(*cuda.KernelCall) error { return nil }}

// gpuPresent reports whether the cuda backend sees a device.
func gpuPresent(ctx context.Context) bool {
	n, err := device.Count(ctx, device.WithBackend(device.BackendCUDA))
	return err == nil && n > 0
}
