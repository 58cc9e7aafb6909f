package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/device"
)

// TestFanOutRowsRunOnFourSimulatedDevices runs the fan-out rows as the suite does on a
// simulator of four devices: each runs on the devices its name says, a row of more devices
// than the machine has is a note, and the report has the scaling table and the tail.
func TestFanOutRowsRunOnFourSimulatedDevices(t *testing.T) {
	o, err := parseFlags([]string{"-backend", "sim", "-sim-devices", "4", "-repeat", "1",
		"-scenarios", "group_jobs_1,group_jobs_2,group_jobs_4,group_jobs_8,group_jobs_all,group_tail,isolated_group_jobs_all"})
	require.NoError(t, err)
	rep := &Report{Meta: Meta{Backends: []string{"sim"}}}
	require.NoError(t, runBackend(t.Context(), o, device.BackendSim, 0, rep))
	require.Empty(t, rep.Errors)
	devices := map[string]int{}
	for _, r := range rep.Results {
		assert.True(t, r.Checked, r.Scenario)
		assert.Positive(t, r.Value, r.Scenario)
		devices[r.Scenario] = r.Devices
	}
	assert.Equal(t, map[string]int{"group_jobs_1": 1, "group_jobs_2": 2, "group_jobs_all": 4, "group_tail": 4, "isolated_group_jobs_all": 4}, devices)
	require.Len(t, rep.Skipped, 2, "group_jobs_4 and group_jobs_8: group_jobs_all is the row on all four")
	for _, s := range rep.Skipped {
		assert.Contains(t, s, "the machine has 4 devices")
	}

	var out bytes.Buffer
	printTables(&out, rep)
	s := out.String()
	require.Contains(t, s, "== fan-out scaling on sim, in process")
	table := s[strings.Index(s, "== fan-out scaling on sim, in process"):]
	for _, row := range []string{"group_jobs_1", "group_jobs_2", "group_jobs_all", "group_tail on 4 devices"} {
		assert.Contains(t, table, row)
	}
	assert.NotContains(t, table, "met", "the target is judged on the GPU only")
	assert.Contains(t, s, "== fan-out scaling on sim, isolated")

	dir := t.TempDir()
	require.NoError(t, plots(dir, rep))
	_, err = os.Stat(filepath.Join(dir, "scaling.svg"))
	require.NoError(t, err, "the in-process rows' ratios to one device are drawn")
}

// scalingReport is a GPU run in two rounds: C++ on one GPU at 6500 jobs/s around each, the
// group on 1, 2 and 4 GPUs, and group_jobs_all on the same 4.
func scalingReport() *Report {
	rep := &Report{Meta: Meta{Backends: []string{"cuda"}, GPU: "Test GPU"}}
	for pass := 1; pass <= 3; pass++ {
		rep.Results = append(rep.Results, Result{Impl: "cpp", Scenario: "busy_jobs", Unit: "jobs/s", Value: 6500, Checked: true, Pass: pass})
	}
	for round := 1; round <= 2; round++ {
		for _, r := range []struct {
			name    string
			devices int
			value   float64
		}{{"group_jobs_1", 1, 6600}, {"group_jobs_2", 2, 13000}, {"group_jobs_4", 4, 23400 + 100*float64(round)}, {"group_jobs_all", 4, 1}} {
			rep.Results = append(rep.Results, Result{Impl: "gpuactor", Backend: "cuda", Scenario: r.name, Unit: "jobs/s",
				Value: r.value, Checked: true, Round: round, Devices: r.devices})
		}
	}
	return rep
}

// TestScalingTableJudgesEachNAgainstCppOnOneGPU: each N's jobs per second are divided by the
// group's own single device and by C++ on one GPU, round by round, and held to 0.95 × N; a
// row on as many devices as another is not shown twice.
func TestScalingTableJudgesEachNAgainstCppOnOneGPU(t *testing.T) {
	rep := scalingReport()
	pts := scalingPoints(rep, "cuda", "")
	require.Len(t, pts, 3)
	assert.Equal(t, []int{1, 2, 4}, []int{pts[0].n, pts[1].n, pts[2].n})
	assert.Equal(t, "group_jobs_4", pts[2].scenario, "group_jobs_all repeats N = 4 and is left out")
	assert.InDelta(t, 13000.0/6600, pts[1].overOne, 1e-9)
	assert.InDelta(t, 13000.0/6500, pts[1].overCpp, 1e-9)
	assert.InDelta(t, 23500.0/6500, pts[2].overCpp, 1e-9, "the median of two rounds is the lower, by nearest rank")

	var out bytes.Buffer
	printScaling(&out, rep)
	s := out.String()
	lines := strings.Split(s, "\n")
	line := func(prefix string) string {
		for _, l := range lines {
			if strings.HasPrefix(strings.TrimSpace(l), prefix) {
				return l
			}
		}
		t.Fatalf("no line %q in\n%s", prefix, s)
		return ""
	}
	assert.Contains(t, line("1 "), "≥ 0.95× met")
	assert.Contains(t, line("2 "), "2.00×")
	assert.Contains(t, line("2 "), "≥ 1.90× met")
	assert.Contains(t, line("4 "), "3.62×")
	assert.Contains(t, line("4 "), "≥ 3.80× MISSED")
	assert.NotContains(t, s, "isolated", "no isolated rows ran")
}

// TestScalingPlot draws the scaling plot from fan-out rows, and none without them.
func TestScalingPlot(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, plots(dir, scalingReport()))
	st, err := os.Stat(filepath.Join(dir, "scaling.svg"))
	require.NoError(t, err)
	assert.Greater(t, st.Size(), int64(1000))

	none := t.TempDir()
	require.NoError(t, plots(none, &Report{Meta: Meta{Backends: []string{"cuda"}}}))
	_, err = os.Stat(filepath.Join(none, "scaling.svg"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}
