package main

import (
	"errors"
	"fmt"
	"slices"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/isolate"
)

// The isolated rows run rows of the suite again on an isolated device (device.Isolated): the
// device's actor stays in the bench's process and every backend call crosses to a worker
// process, the bench's own binary run again, over shared-memory rings. Each is the in-process
// row's own code run against an env whose device is isolated; it is held to the same C++ row,
// whose passes are the same ones, and shown beside the in-process row of the same round
// (printIsolated), which is what its targets are set against.

// isolatedPrefix names an isolated row: isolatedPrefix + the in-process row's name.
const isolatedPrefix = "isolated_"

// isolatedRow is an in-process row that also runs isolated, and what the isolated figure is
// held to, against the in-process one of the same round.
type isolatedRow struct {
	base string
	// maxRatio: isolated ÷ in-process at most this (times); minRatio: at least this (rates);
	// maxExtra: isolated − in-process at most this, in the row's unit, for its p50. 0: none.
	maxRatio, minRatio, maxExtra float64
}

// isolatedRows: an enqueue pays one crossing, a round trip two plus the worker's wake-up, and
// a copy between pinned shared memory and the device is the same DMA as in process.
var isolatedRows = []isolatedRow{
	{base: "launch_enqueue", maxRatio: 1.2},
	{base: "launch_roundtrip", maxExtra: 3},
	{base: "h2d_async_64B"},
	{base: "h2d_pinned", minRatio: 0.95},
	{base: "d2h_pinned", minRatio: 0.95},
	// The group rows over isolated devices, every device a worker process of its own: a job is
	// the same kernel, and its launch and completion each cross a ring, so GPU-bound jobs should
	// go as fast as in process. The tail has no target: it is shown beside the in-process one.
	{base: "group_jobs_all", minRatio: 0.95},
	{base: "group_tail"},
	// Allocations are calls whose answer (the pointer) the actor waits for, a crossing there
	// and back per allocation where launches and copies are posted: no target, shown beside
	// the in-process rows.
	{base: "mallocasync_free_pair"},
	{base: "malloc_free_pair"},
}

// isolatedScenarios are the isolatedRows' rows, made from the in-process rows' definitions.
func isolatedScenarios() []scenario {
	var out []scenario
	for _, s := range slices.Concat(coreScenarios(), groupScenarios(), allocScenarios()) {
		if !slices.ContainsFunc(isolatedRows, func(r isolatedRow) bool { return r.base == s.name }) {
			continue
		}
		iso := s
		iso.name, iso.ref, iso.run = isolatedPrefix+s.name, s.refName(), onIsolated(s.run)
		iso.probes = nil // shown once, beside the in-process row
		out = append(out, iso)
	}
	return out
}

// onIsolated runs a row's code against the env's isolated twin.
func onIsolated(run func(*env, int64, int) (float64, *float64, error)) func(*env, int64, int) (float64, *float64, error) {
	return func(e *env, size int64, repeat int) (float64, *float64, error) {
		ie, err := e.isolatedEnv()
		if err != nil {
			return 0, nil, err
		}
		return run(ie, size, repeat)
	}
}

// isolatedEnv opens, on first use, the env's device again as an isolated device, with the
// options the env's was opened with, and the empty kernel compiled on it; the env closes it
// (closeIsolated). A failure to open it is kept and returned to every isolated row.
func (e *env) isolatedEnv() (*env, error) {
	e.isoOnce.Do(func() {
		opts := append(slices.Clip(e.devOpts), device.Isolated())
		dev, err := device.Open(e.ctx, e.dev.Ordinal(), opts...)
		if err != nil {
			e.isoErr = fmt.Errorf("opening the isolated device: %w", err)
			return
		}
		k, err := loadEmpty(e.ctx, dev)
		if err != nil {
			e.isoErr = fmt.Errorf("the empty kernel on the isolated device: %w", errors.Join(err, dev.Close()))
			return
		}
		e.iso = &env{ctx: e.ctx, dev: dev, empty: k, copiers: e.copiers, devOpts: opts, binding: func() (*direct, error) {
			return nil, errors.New("the binding rows do not run on an isolated device")
		}}
	})
	return e.iso, e.isoErr
}

// closeIsolated closes the isolated devices, when they were opened; their workers exit.
func (e *env) closeIsolated() {
	if e.iso != nil {
		e.iso.close()
	}
}

// serveWorker is isolate.Main with every simulator kernel the bench compiles, so that the
// isolated rows run on the simulator too: in a worker process it serves the isolated device
// and exits; anywhere else it returns at once. main and TestMain call it first.
func serveWorker() {
	isolate.Main(isolate.WithKernels(emptySim), isolate.WithKernels(argKernelSim), isolate.WithKernels(busySim))
}
