package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/sim"
)

// TestMain lets this test binary be the worker of the isolated rows' devices.
func TestMain(m *testing.M) {
	serveWorker()
	os.Exit(m.Run())
}

// isolatedAndRefs is every isolated row with the in-process row it is shown beside.
func isolatedAndRefs() string {
	var names []string
	for _, r := range isolatedRows {
		names = append(names, r.base, isolatedPrefix+r.base)
	}
	return strings.Join(names, ",")
}

// TestIsolatedRowsRunOnTheSimulator runs the isolated rows and their in-process rows as the
// suite does, on the simulator: every row runs and passes its checks, the isolated ones on a
// device whose worker is another process, and the report shows them side by side.
func TestIsolatedRowsRunOnTheSimulator(t *testing.T) {
	o, err := parseFlags([]string{"-backend", "sim", "-repeat", "1", "-sizes", "4K,64K", "-scenarios", isolatedAndRefs()})
	require.NoError(t, err)
	rep := &Report{}
	require.NoError(t, runBackend(t.Context(), o, device.BackendSim, 0, rep))
	require.Empty(t, rep.Errors)
	require.Empty(t, rep.Skipped)
	got := map[string]int{}
	for _, r := range rep.Results {
		assert.True(t, r.Checked, "%s %d", r.Scenario, r.Size)
		assert.Positive(t, r.Value, "%s %d", r.Scenario, r.Size)
		got[r.Scenario]++
	}
	for _, r := range isolatedRows {
		want := 1
		if r.base == "h2d_pinned" || r.base == "d2h_pinned" {
			want = 2 // one per size
		}
		assert.Equal(t, want, got[r.base], r.base)
		assert.Equal(t, want, got[isolatedPrefix+r.base], r.base)
	}

	var out bytes.Buffer
	printTables(&out, rep)
	s := out.String()
	require.Contains(t, s, "== isolated devices on sim")
	side := s[strings.Index(s, "== isolated devices on sim"):]
	for _, row := range []string{"isolated_launch_enqueue", "isolated_launch_roundtrip p50", "isolated_launch_roundtrip p99", "isolated_h2d_async_64B", "isolated_h2d_pinned", "isolated_d2h_pinned", "isolated_group_jobs_all", "isolated_group_tail p50", "isolated_group_tail p99", "isolated_mallocasync_free_pair", "isolated_malloc_free_pair"} {
		assert.Contains(t, side, row)
	}
	assert.NotContains(t, side, "met", "targets are for the GPU")
}

// TestIsolatedEnvIsAWorkerOpenedOnce: the isolated rows share one isolated device, opened on
// first use with the env's options, in a worker process, and closed with the env.
func TestIsolatedEnvIsAWorkerOpenedOnce(t *testing.T) {
	o, err := parseFlags([]string{"-backend", "sim", "-repeat", "1"})
	require.NoError(t, err)
	e, closeEnv, err := openEnv(t.Context(), o, device.BackendSim, device.WaiterQueryDefault, &Report{})
	require.NoError(t, err)
	ie, err := e.isolatedEnv()
	require.NoError(t, err)
	assert.True(t, ie.dev.Isolated())
	assert.False(t, e.dev.Isolated())
	pid := ie.dev.WorkerPID()
	assert.NotZero(t, pid)
	assert.NotEqual(t, os.Getpid(), pid)
	again, err := e.isolatedEnv()
	require.NoError(t, err)
	assert.Same(t, ie, again)
	_, err = ie.binding()
	assert.ErrorContains(t, err, "isolated")
	devs, err := ie.groupDevices()
	require.NoError(t, err)
	require.Len(t, devs, 2, "the group rows' devices: every device of the simulator")
	for _, d := range devs {
		assert.True(t, d.Isolated(), "the isolated group rows run on isolated devices only")
	}

	closeEnv()
	_, err = ie.dev.MallocBytes(context.Background(), 64)
	assert.Error(t, err, "the isolated device is closed with the env")
	_, err = devs[1].MallocBytes(context.Background(), 64)
	assert.Error(t, err, "and the isolated group rows' other device")
	assert.Error(t, e.dev.Synchronize(context.Background()), "and the env's own")
}

// TestIsolatedRowsFailWhenTheDeviceCannotOpen: an isolated device that cannot be opened fails
// each isolated row with the reason, once, and leaves the env's own device usable.
func TestIsolatedRowsFailWhenTheDeviceCannotOpen(t *testing.T) {
	ctx := t.Context()
	// The env's device is ordinal 1 of a two-device simulator, but the options it hands on
	// describe a one-device machine: the isolated device cannot open ordinal 1.
	two := []device.Option{device.WithBackend(device.BackendSim), device.WithSimulator(sim.New(sim.WithDevices(2)))}
	dev, err := device.Open(ctx, 1, two...)
	require.NoError(t, err)
	defer dev.Close()
	k, err := loadEmpty(ctx, dev)
	require.NoError(t, err)
	one := []device.Option{device.WithBackend(device.BackendSim), device.WithSimulator(sim.New(sim.WithDevices(1)))}
	e := &env{ctx: ctx, dev: dev, empty: k, devOpts: one}
	defer e.closeIsolated()

	rep := &Report{}
	unsized := 0
	for _, s := range isolatedScenarios() {
		if !s.sized {
			runTask(e, device.BackendSim, task{s, s.size}, 0, 1, rep, &progress{})
			unsized++
		}
	}
	require.Len(t, rep.Errors, unsized, "%v", rep.Errors)
	for _, msg := range rep.Errors {
		assert.Contains(t, msg, "opening the isolated device")
		assert.Contains(t, msg, "ordinal 1 out of range")
	}
	for _, r := range rep.Results {
		assert.False(t, r.Checked, r.Scenario)
	}
	assert.Nil(t, e.iso)
	_, _, err = launchRoundTrip(e, 0, 1)
	assert.NoError(t, err, "the env's own device goes on")
}

// TestIsolatedScenariosAreTheCoreRowsHeldToTheSameCppRows: each isolated row is its in-process
// row's definition, compared with the same C++ row, and run between the same C++ passes.
func TestIsolatedScenariosAreTheCoreRowsHeldToTheSameCppRows(t *testing.T) {
	iso := isolatedScenarios()
	require.Len(t, iso, len(isolatedRows))
	for i, r := range isolatedRows {
		s := iso[i]
		assert.Equal(t, isolatedPrefix+r.base, s.name)
		assert.Equal(t, refOf(r.base), s.refName())
		assert.Equal(t, refOf(r.base), refOf(s.name))
		assert.Contains(t, scenarioNames(), s.name)
	}

	o, err := parseFlags([]string{"-scenarios", "isolated_launch_enqueue,launch_enqueue,isolated_h2d_pinned,h2d_pinned", "-sizes", "1M"})
	require.NoError(t, err)
	groups := groupByRef(plan(o))
	require.Len(t, groups, 2)
	names := func(g refGroup) (out []string) {
		for _, t := range g.tasks {
			out = append(out, t.s.name)
		}
		return out
	}
	assert.Equal(t, "launch_enqueue", groups[0].ref)
	assert.ElementsMatch(t, []string{"launch_enqueue", "isolated_launch_enqueue"}, names(groups[0]))
	assert.Equal(t, "h2d_pinned", groups[1].ref)
	assert.ElementsMatch(t, []string{"h2d_pinned", "isolated_h2d_pinned"}, names(groups[1]))
}

// TestIsolatedTableJudgesTargetsPerRound: on the GPU, the isolated rows are divided by (and,
// for times, set against) the in-process row of the same round, and held to their targets.
func TestIsolatedTableJudgesTargetsPerRound(t *testing.T) {
	rep := &Report{Meta: Meta{Backends: []string{"cuda"}, GPU: "Test GPU"}}
	add := func(r Result) { rep.Results = append(rep.Results, r) }
	p99 := func(v float64) *float64 { return &v }
	for round, v := range []float64{4.0, 5.0, 4.0} {
		add(Result{Impl: "gpuactor", Backend: "cuda", Scenario: "launch_enqueue", Unit: "us/launch", Value: v, Checked: true, Round: round + 1})
		add(Result{Impl: "gpuactor", Backend: "cuda", Scenario: "isolated_launch_enqueue", Unit: "us/launch", Value: v * []float64{1.1, 1.3, 1.15}[round], Checked: true, Round: round + 1})
		add(Result{Impl: "gpuactor", Backend: "cuda", Scenario: "launch_roundtrip", Unit: "us", Value: 10, P99: p99(12), Checked: true, Round: round + 1})
		add(Result{Impl: "gpuactor", Backend: "cuda", Scenario: "isolated_launch_roundtrip", Unit: "us", Value: 14, P99: p99(20), Checked: true, Round: round + 1})
		add(Result{Impl: "gpuactor", Backend: "cuda", Scenario: "h2d_pinned", Size: 1 << 20, Unit: "GB/s", Value: 50, Checked: true, Round: round + 1})
		add(Result{Impl: "gpuactor", Backend: "cuda", Scenario: "isolated_h2d_pinned", Size: 1 << 20, Unit: "GB/s", Value: 49, Checked: true, Round: round + 1})
		add(Result{Impl: "cpp", Scenario: "launch_enqueue", Unit: "us/launch", Value: 4, Checked: true, Pass: round + 1})
	}
	var out bytes.Buffer
	printTables(&out, rep)
	s := out.String()
	require.Contains(t, s, "== isolated devices on cuda")
	main, side := s[:strings.Index(s, "== isolated devices on cuda")], s[strings.Index(s, "== isolated devices on cuda"):]
	assert.Contains(t, main, "isolated_launch_enqueue", "the isolated rows are in the main table, against C++")

	line := func(prefix string) string {
		for _, l := range strings.Split(side, "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), prefix+" ") {
				return l
			}
		}
		t.Fatalf("no %q row in:\n%s", prefix, side)
		return ""
	}
	enq := line("isolated_launch_enqueue")
	assert.Contains(t, enq, "1.15×", "median of the rounds' 1.1, 1.3, 1.15")
	assert.Contains(t, enq, "1.10–1.30×")
	assert.Contains(t, enq, "≤ 1.20× met")
	rt := line("isolated_launch_roundtrip p50")
	assert.Contains(t, rt, "+4.00")
	assert.Contains(t, rt, "≤ +3.00 MISSED")
	assert.Contains(t, line("isolated_launch_roundtrip p99"), "+8.00")
	pinned := line("isolated_h2d_pinned")
	assert.Contains(t, pinned, "0.98×")
	assert.Contains(t, pinned, "≥ 0.95× met")

	// A failed round leaves the row unjudged.
	for i := range rep.Results {
		if rep.Results[i].Scenario == "isolated_h2d_pinned" && rep.Results[i].Round == 2 {
			rep.Results[i].Checked = false
		}
	}
	out.Reset()
	printTables(&out, rep)
	s = out.String()
	side = s[strings.Index(s, "== isolated devices on cuda"):]
	assert.Contains(t, line("isolated_h2d_pinned"), "FAILED")
	assert.NotContains(t, line("isolated_h2d_pinned"), "met")

	out.Reset()
	printIsolated(&out, &Report{Meta: Meta{Backends: []string{"cuda"}}, Results: rep.Results[:1]})
	assert.Empty(t, out.String(), "no isolated rows, no section")
}
