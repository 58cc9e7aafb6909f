package main

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
	"github.com/gpuactor/gpuactor/internal/testgpu"
)

func TestGroupByRefPutsRowsOfOneCppRowTogether(t *testing.T) {
	o, err := parseFlags([]string{"-scenarios", "graph_node,graph_node_launchn,binding_graph_node,h2d_pinned,h2d_staged,launch_enqueue", "-sizes", "4K,1M"})
	require.NoError(t, err)
	groups := groupByRef(plan(o))
	names := map[string][]string{}
	for _, g := range groups {
		k := fmt.Sprintf("%s/%d", g.ref, g.size)
		_, dup := names[k]
		require.False(t, dup, "C++ row %s in two groups", k)
		for _, task := range g.tasks {
			names[k] = append(names[k], task.s.name)
		}
	}
	assert.ElementsMatch(t, []string{"graph_node", "graph_node_launchn", "binding_graph_node"}, names["graph_node/1"])
	assert.ElementsMatch(t, []string{"graph_node", "graph_node_launchn"}, names["graph_node/100"], "no binding row at 100 nodes")
	assert.ElementsMatch(t, []string{"h2d_pinned", "h2d_staged"}, names["h2d_pinned/4096"])
	assert.ElementsMatch(t, []string{"h2d_pinned", "h2d_staged"}, names["h2d_pinned/1048576"])
	for _, g := range groups {
		want := []string(nil)
		if g.ref == "h2d_pinned" {
			want = []string{"h2d_staged", "h2d_pageable"}
		}
		assert.Equal(t, append([]string{g.ref}, want...), g.cppRows(), "the C++ rows of %s's passes", g.ref)
	}
	assert.Equal(t, []string{"launch_enqueue"}, names["launch_enqueue/0"])
	total := 0
	for _, g := range groups {
		total += len(g.tasks)
	}
	assert.Equal(t, len(plan(o)), total, "every row runs once a round")
}

func TestSuiteArgsNameOneRowAlone(t *testing.T) {
	o, err := parseFlags([]string{"-repeat", "7", "-device", "1"})
	require.NoError(t, err)
	sized := refGroup{ref: "h2d_pinned", size: 1 << 20, sized: true}.suiteArgs(o)
	assert.Equal(t, []string{"--scenarios", "h2d_pinned", "--repeat", "7", "--device", "1", "--sizes", "1048576"}, sized)
	staged := task{s: scenario{name: "h2d_staged", ref: "h2d_pinned", byHand: "h2d_staged"}, size: 4096}
	withHand := refGroup{ref: "h2d_pinned", size: 4096, sized: true, tasks: []task{staged, staged}}.suiteArgs(o)
	assert.Equal(t, []string{"--scenarios", "h2d_pinned,h2d_staged", "--repeat", "7", "--device", "1", "--sizes", "4096"}, withHand)
	graph := refGroup{ref: "graph_node", size: 10, nodes: true}.suiteArgs(o)
	assert.Equal(t, []string{"--scenarios", "graph_node", "--repeat", "7", "--device", "1", "--graph-sizes", "10"}, graph)
	for _, plain := range [][]string{refGroup{ref: "launch_enqueue"}.suiteArgs(o), refGroup{ref: "h2d_async_64B", size: 64}.suiteArgs(o)} {
		assert.NotContains(t, plain, "--sizes")
		assert.NotContains(t, plain, "--graph-sizes", "a fixed size is no node count")
	}
}

// fakeSuite answers each pass with one result for the row it names, its value counting the
// passes, and notes how many gpuactor results the report held at each call.
type fakeSuite struct {
	rep    *Report
	calls  [][]string
	before []int // gpuactor results in rep at each call
	tids   []int // the OS thread of each call
	status int
}

func (f *fakeSuite) suite(args []string) ([]byte, int) {
	f.calls = append(f.calls, args)
	f.tids = append(f.tids, syscall.Gettid())
	n := 0
	for _, r := range f.rep.Results {
		if r.Impl == "gpuactor" {
			n++
		}
	}
	f.before = append(f.before, n)
	scenario, size := args[slices.Index(args, "--scenarios")+1], "null"
	if i := slices.Index(args, "--sizes"); i >= 0 {
		size = args[i+1]
	}
	unit := "us/launch"
	if size != "null" {
		unit = "GB/s"
	}
	out := `{"kind":"header","impl":"cpp","device":"fake"}` + "\n"
	// The first row's value counts the calls; a row after it (a byHand row) is ten times that.
	for i, sc := range strings.Split(scenario, ",") {
		out += fmt.Sprintf(`{"kind":"result","impl":"cpp","scenario":%q,"size":%s,"unit":%q,"value":%d,"repeats":1,"checked":true}`, sc, size, unit, len(f.calls)*max(1, 10*i)) + "\n"
		if f.status != 0 {
			out += fmt.Sprintf(`{"kind":"error","impl":"cpp","scenario":%q,"message":"check failed"}`, sc) + "\n"
		}
	}
	return []byte(out), f.status
}

func TestRunInProcessPutsEachRoundBetweenTwoPassesOfItsRow(t *testing.T) {
	o, err := parseFlags([]string{"-backend", "sim", "-scenarios", "launch_enqueue,h2d_pinned,h2d_staged", "-sizes", "4K", "-repeat", "1", "-rounds", "3"})
	require.NoError(t, err)
	rep := &Report{}
	fake := &fakeSuite{rep: rep}
	require.NoError(t, runInProcess(context.Background(), o, device.BackendSim, fake, rep))
	require.Empty(t, rep.Errors)

	// Two C++ rows (launch_enqueue; h2d_pinned 4K for both copy rows, with h2d_staged's
	// by-hand and pageable rows in the same passes), four passes each.
	require.Len(t, fake.calls, 8)
	for i, args := range fake.calls[:4] {
		assert.Equal(t, "launch_enqueue", args[1], "call %d", i)
	}
	for i, args := range fake.calls[4:] {
		assert.Equal(t, "h2d_pinned,h2d_staged,h2d_pageable", args[1], "call %d", i+4)
	}
	// Each pass comes after the round before it: one gpuactor row a round for launch_enqueue,
	// then two (h2d_pinned and h2d_staged).
	assert.Equal(t, []int{0, 1, 2, 3, 3, 5, 7, 9}, fake.before)

	var cpp, gpu []Result
	for _, r := range rep.Results {
		switch r.Impl {
		case "cpp":
			cpp = append(cpp, r)
		case "gpuactor":
			gpu = append(gpu, r)
		}
	}
	require.Len(t, cpp, 16)
	for i, r := range cpp[:4] {
		assert.Equal(t, i+1, r.Pass, "passes number 1..rounds+1 per C++ row")
	}
	for i, r := range cpp[4:] {
		assert.Equal(t, i/3+1, r.Pass, "passes number 1..rounds+1 per C++ row")
	}
	require.Len(t, gpu, 9)
	for _, r := range gpu {
		assert.True(t, r.Checked, "%s", r.Scenario)
		assert.Contains(t, []int{1, 2, 3}, r.Round)
	}
	// The copy rows take turns at following the pass.
	var order []string
	for _, r := range gpu[3:] {
		order = append(order, fmt.Sprintf("%d:%s", r.Round, r.Scenario))
	}
	assert.Equal(t, []string{"1:h2d_pinned", "1:h2d_staged", "2:h2d_staged", "2:h2d_pinned", "3:h2d_pinned", "3:h2d_staged"}, order)
	// Round r is divided by the mean of passes r and r+1 (the fake's values are 1..8).
	for _, row := range collapseRounds(rep.Results) {
		if row.Impl != "gpuactor" || row.Scenario != "launch_enqueue" {
			continue
		}
		med, lo, hi, ok := roundRatios(rep, row, false)
		require.True(t, ok)
		var want []float64
		for _, r := range gpu {
			if r.Scenario == "launch_enqueue" {
				want = append(want, r.Value/(float64(r.Round)+0.5))
			}
		}
		assert.InDelta(t, median(want), med, 1e-12)
		assert.InDelta(t, slices.Min(want), lo, 1e-12)
		assert.InDelta(t, slices.Max(want), hi, 1e-12)
	}
	// The staged row against its by-hand row: passes 5..8 of the fake hold 50..80 there.
	for _, row := range collapseRounds(rep.Results) {
		if row.Impl != "gpuactor" || row.Scenario != "h2d_staged" {
			continue
		}
		med, _, _, ok := roundRatiosAgainst(rep, row, "h2d_staged", false)
		require.True(t, ok)
		var want []float64
		for _, r := range gpu {
			if r.Scenario == "h2d_staged" {
				want = append(want, r.Value/(10*(float64(r.Round)+4.5)))
			}
		}
		assert.InDelta(t, median(want), med, 1e-12)
	}
}

// With -cpp-thread actor a pass runs on the device actor's thread, where the rows call CUDA
// from, and the rounds still fall between the passes.
func TestCppPassesCanRunOnTheActorThread(t *testing.T) {
	ctx := context.Background()
	dev, err := device.Open(ctx, 0, device.WithBackend(device.BackendSim))
	require.NoError(t, err)
	defer dev.Close()
	actorTid, err := core.Run(ctx, (*core.Device)(dev), func(backend.Device, *core.Tracker) (int, error) { return syscall.Gettid(), nil }).Await(ctx)
	require.NoError(t, err)
	fake := &fakeSuite{rep: &Report{}}
	e := &env{ctx: ctx, dev: dev}
	for range 3 {
		_, status := suiteOn(e, "actor", fake, []string{"--scenarios", "launch_enqueue"})
		require.Zero(t, status)
	}
	assert.Equal(t, []int{actorTid, actorTid, actorTid}, fake.tids)

	o, err := parseFlags([]string{"-backend", "sim", "-inprocess", "-cpp-thread", "actor", "-scenarios", "launch_enqueue", "-repeat", "1", "-rounds", "2"})
	require.NoError(t, err)
	rep := &Report{}
	fake = &fakeSuite{rep: rep}
	require.NoError(t, runInProcess(ctx, o, device.BackendSim, fake, rep))
	require.Empty(t, rep.Errors)
	assert.Equal(t, []int{0, 1, 2}, fake.before, "a pass before the first round and after each")
	assert.Equal(t, fake.tids[0], fake.tids[1], "the one actor thread")
	assert.Equal(t, fake.tids[0], fake.tids[2], "the one actor thread")

	_, err = parseFlags([]string{"-inprocess", "-cpp-thread", "gpu"})
	assert.ErrorContains(t, err, "-cpp-thread")
	_, err = parseFlags([]string{"-cpp-thread", "actor"})
	assert.ErrorContains(t, err, "-inprocess")
	_, err = parseFlags([]string{"-cpp-thread", "own"})
	assert.ErrorContains(t, err, "-inprocess")

	o, err = parseFlags([]string{"-inprocess"})
	require.NoError(t, err)
	assert.Equal(t, "actor", o.cppThread, "the default in-process")
	o, err = parseFlags([]string{"-inprocess", "-cpp-thread", "own"})
	require.NoError(t, err)
	assert.Equal(t, "own", o.cppThread)
	o, err = parseFlags(nil)
	require.NoError(t, err)
	assert.Empty(t, o.cppThread, "no C++ passes in the process")
}

func TestRunInProcessRecordsFailedCppChecks(t *testing.T) {
	o, err := parseFlags([]string{"-backend", "sim", "-scenarios", "launch_enqueue", "-repeat", "1"})
	require.NoError(t, err)
	rep := &Report{}
	fake := &fakeSuite{rep: rep, status: 1}
	require.NoError(t, runInProcess(context.Background(), o, device.BackendSim, fake, rep))
	require.Len(t, fake.calls, 2)
	assert.Len(t, rep.Errors, 2, "each pass's failed check is reported")
	assert.Contains(t, strings.Join(rep.Errors, "\n"), "check failed")
}

func TestOpenCppLibNamesWhatIsWrong(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "libnope.so")
	_, err := openCppLib(missing)
	require.Error(t, err)
	assert.Contains(t, err.Error(), missing)

	// A library that loads but is not the suite.
	_, err = openCppLib("libc.so.6")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "suite_run")
}

func TestInProcessFlags(t *testing.T) {
	o, err := parseFlags([]string{"-inprocess", "-cbaseline-lib", "/tmp/lib.so"})
	require.NoError(t, err)
	assert.True(t, o.inprocess)
	assert.Equal(t, "/tmp/lib.so", o.cbaselineLib)
	_, err = parseFlags([]string{"-cbaseline-lib", "/tmp/lib.so"})
	assert.ErrorContains(t, err, "-inprocess")
	_, err = parseFlags([]string{"-inprocess", "-cbaseline", "off"})
	assert.ErrorContains(t, err, "-inprocess")
}

func TestGraphSizesPickTheGraphRows(t *testing.T) {
	o, err := parseFlags([]string{"-graph-sizes", "1,10", "-scenarios", "graph_node,binding_graph_node,graph_instantiate,h2d_pinned", "-sizes", "4K"})
	require.NoError(t, err)
	var got []string
	for _, task := range plan(o) {
		got = append(got, fmt.Sprintf("%s/%d", task.s.name, task.size))
	}
	assert.ElementsMatch(t, []string{"graph_instantiate/1", "graph_instantiate/10", "graph_node/1", "graph_node/10",
		"binding_graph_node/1", "binding_graph_node/10", "h2d_pinned/4096"}, got, "-graph-sizes leaves the byte-sized rows alone")
	for _, bad := range []string{"3", "x", "1,,10"} {
		_, err := parseFlags([]string{"-graph-sizes", bad})
		assert.ErrorContains(t, err, "-graph-sizes", bad)
	}
}

// On a GPU host with nvcc: suite.cu builds as a library, loads, and its passes land around
// gpuactor's rounds with figures of their own.
func TestInProcessWithTheBuiltLibrary(t *testing.T) {
	ctx := context.Background()
	testgpu.Need(t, gpuPresent(ctx), "the cuda backend sees no device")
	if _, err := exec.LookPath("nvcc"); err != nil {
		t.Skip("no nvcc to build the C++ baseline library")
	}
	o, err := parseFlags([]string{"-backend", "cuda", "-inprocess", "-scenarios", "graph_node_launchn,h2d_pinned",
		"-graph-sizes", "1", "-sizes", "1M", "-repeat", "3", "-rounds", "2"})
	require.NoError(t, err)
	rep := &Report{}
	require.NoError(t, probeMeta(ctx, o, rep))
	path, err := cbaselineLib(ctx, o, rep.Meta.CC)
	require.NoError(t, err)
	lib, err := openCppLib(path)
	require.NoError(t, err)
	require.NoError(t, runInProcess(ctx, o, device.BackendCUDA, lib, rep))
	require.Empty(t, rep.Errors)
	passes := map[string][]int{}
	for _, r := range rep.Results {
		if r.Impl == "cpp" {
			assert.True(t, r.Checked, "%s", r.Scenario)
			assert.Positive(t, r.Value, "%s", r.Scenario)
			passes[fmt.Sprintf("%s/%d", r.Scenario, r.Size)] = append(passes[fmt.Sprintf("%s/%d", r.Scenario, r.Size)], r.Pass)
		}
	}
	assert.Equal(t, map[string][]int{"graph_node/1": {1, 2, 3}, "h2d_pinned/1048576": {1, 2, 3}}, passes,
		"one C++ row a call, three passes around two rounds")
}
