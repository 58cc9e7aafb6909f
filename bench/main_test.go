package main

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseFlags(t *testing.T) {
	o, err := parseFlags([]string{"-backend", "sim", "-sizes", "4K,2M,1G,100", "-repeat", "3", "-scenarios", "d2d,launch_enqueue"})
	require.NoError(t, err)
	assert.Equal(t, []int64{4096, 2 << 20, 1 << 30, 100}, o.sizes)
	assert.True(t, o.wants("d2d"))
	assert.False(t, o.wants("h2d_pinned"))
	for _, bad := range [][]string{
		{"-backend", "opencl"}, {"-repeat", "0"}, {"-sizes", "4X"}, {"-sizes", "-5"}, {"-scenarios", "warp_drive"},
	} {
		_, err := parseFlags(bad)
		assert.Error(t, err, "%v", bad)
	}
}

func TestStatistics(t *testing.T) {
	assert.Equal(t, 3.0, median([]float64{5, 1, 3}))
	xs := make([]float64, 100)
	for i := range xs {
		xs[i] = float64(100 - i)
	}
	assert.Equal(t, 99.0, percentile(xs, 99))
	assert.Equal(t, 50.0, percentile(xs, 50))
	assert.True(t, math.IsNaN(median(nil)))
	assert.Equal(t, 1000, clampIters(4096))
	assert.Equal(t, 4, clampIters(1<<30))
	b := make([]byte, 1000)
	fillPattern(b, 3)
	assert.NotContains(t, b, byte(0))
	assert.NoError(t, checkBytes(b, b))
	c := append([]byte(nil), b...)
	c[517]++
	assert.ErrorContains(t, checkBytes(c, b), "byte 517")
}

func TestTableMatchesBaselineRows(t *testing.T) {
	p99 := 12.0
	cppP99 := 10.0
	rep := &Report{Meta: Meta{Backends: []string{"cuda"}, GPU: "Test GPU"}, Results: []Result{
		{Impl: "gpuactor", Backend: "cuda", Scenario: "launch_pipelined_8", Unit: "us/launch", Value: 3, Checked: true},
		{Impl: "gpuactor", Backend: "cuda", Scenario: "launch_roundtrip", Unit: "us", Value: 9, P99: &p99, Checked: true},
		{Impl: "gpuactor", Backend: "cuda", Scenario: "h2d_pinned", Size: 4096, Unit: "GB/s", Value: 5, Checked: true},
		{Impl: "cpp", Scenario: "launch_enqueue", Unit: "us/launch", Value: 3.6, Checked: true, Pass: 1},
		{Impl: "cpp", Scenario: "launch_enqueue", Unit: "us/launch", Value: 4.4, Checked: true, Pass: 2},
		{Impl: "cpp", Scenario: "launch_roundtrip", Unit: "us", Value: 8, P99: &cppP99, Checked: true},
		{Impl: "cpp", Scenario: "h2d_pinned", Size: 4096, Unit: "GB/s", Value: 10, Checked: true},
		{Impl: "cpp", Scenario: "h2d_pinned", Size: 65536, Unit: "GB/s", Value: 20, Checked: true},
	}}
	var out bytes.Buffer
	printTables(&out, rep)
	s := out.String()
	assert.Contains(t, s, "0.75×", "pipelined rows compare with the mean C++ single-thread launch")
	assert.Contains(t, s, "22%", "the two C++ passes differ by 4.4 ÷ 3.6 − 1")
	assert.Contains(t, s, "1.12×", "round trip p50 9 ÷ 8")
	assert.Contains(t, s, "1.20×", "round trip p99 12 ÷ 10")
	assert.Contains(t, s, "0.50×", "bandwidth matched by size")
}

func TestTableRounds(t *testing.T) {
	rep := &Report{Meta: Meta{Backends: []string{"cuda"}, GPU: "Test GPU"}}
	add := func(r Result) { rep.Results = append(rep.Results, r) }
	for pass, v := range []float64{4, 5, 4, 6} {
		add(Result{Impl: "cpp", Scenario: "launch_enqueue", Unit: "us/launch", Value: v, Checked: true, Pass: pass + 1})
		add(Result{Impl: "cpp", Scenario: "h2d_pinned", Size: 4096, Unit: "GB/s", Value: 10, Checked: true, Pass: pass + 1})
	}
	for round, v := range []float64{4.4, 5.4, 5.0} {
		add(Result{Impl: "gpuactor", Backend: "cuda", Scenario: "launch_enqueue", Unit: "us/launch", Value: v, Checked: true, Round: round + 1})
		add(Result{Impl: "gpuactor", Backend: "cuda", Scenario: "h2d_pinned", Size: 4096, Unit: "GB/s", Value: float64(5 + round), Checked: true, Round: round + 1})
	}
	var out bytes.Buffer
	printTables(&out, rep)
	s := out.String()
	assert.Equal(t, 1, strings.Count(s, "launch_enqueue"), "one row for three rounds:\n%s", s)
	assert.Contains(t, s, "ratio range")
	assert.Contains(t, s, "1.00×", "median of 4.4/4.5, 5.4/4.5 and 5.0/5.0")
	assert.Contains(t, s, "0.98–1.20×", "the rounds' range")
	assert.Contains(t, s, "5.00", "gpuactor's median over rounds")
	assert.Contains(t, s, "50%", "the C++ passes differ by 6 ÷ 4 − 1")
	assert.Contains(t, s, "0.60×", "bandwidth: median of 5, 6 and 7 over 10")
	assert.Contains(t, s, "0.50–0.70×")

	rep.Results[len(rep.Results)-1].Checked = false // a failed round fails the row
	out.Reset()
	printTables(&out, rep)
	assert.Contains(t, out.String(), "FAILED")
}

func TestRoundsFlag(t *testing.T) {
	o, err := parseFlags([]string{"-rounds", "3"})
	require.NoError(t, err)
	assert.Equal(t, 3, o.rounds)
	_, err = parseFlags([]string{"-rounds", "0"})
	assert.Error(t, err)
}

func TestBreakdownDividesRowsOfTheSameRound(t *testing.T) {
	rep := &Report{Meta: Meta{Backends: []string{"cuda"}, GPU: "Test GPU"}}
	add := func(r Result) { rep.Results = append(rep.Results, r) }
	for round, v := range []float64{3.0, 3.3, 3.6} {
		add(Result{Impl: "gpuactor", Backend: "cuda", Scenario: "launch_enqueue", Unit: "us/launch", Value: v, Checked: true, Round: round + 1})
		add(Result{Impl: "gpuactor", Backend: "cuda", Scenario: "stream_launch", Unit: "us/launch", Value: v * float64(100+round) / 100, Checked: true, Round: round + 1})
		add(Result{Impl: "gpuactor", Backend: "cuda", Scenario: "binding_launch_enqueue", Unit: "us/launch", Value: 3, Checked: true, Round: round + 1})
	}
	// graph_node by size: only the sizes that have a binding row are divided.
	for _, n := range []int64{1, 10, 100} {
		add(Result{Impl: "gpuactor", Backend: "cuda", Scenario: "graph_node", Size: n, Unit: "us/node", Value: 2, Checked: true})
	}
	add(Result{Impl: "gpuactor", Backend: "cuda", Scenario: "binding_graph_node", Size: 1, Unit: "us/node", Value: 1.6, Checked: true})
	add(Result{Impl: "gpuactor", Backend: "cuda", Scenario: "binding_graph_node", Size: 10, Unit: "us/node", Value: 2, Checked: false})
	// The sim's rows are not the GPU's.
	add(Result{Impl: "gpuactor", Backend: "sim", Scenario: "h2d_async_64B", Size: 64, Unit: "us/copy", Value: 1, Checked: true})
	add(Result{Impl: "gpuactor", Backend: "sim", Scenario: "binding_h2d_async_64B", Size: 64, Unit: "us/copy", Value: 1, Checked: true})

	var out bytes.Buffer
	printBreakdown(&out, rep)
	s := out.String()
	assert.Contains(t, s, "stream_launch ÷ launch_enqueue: 1.01× (1.00–1.02× over 3 round(s))")
	assert.Contains(t, s, "launch_enqueue ÷ binding_launch_enqueue: 1.10× (1.00–1.20× over 3 round(s))")
	assert.Contains(t, s, "graph_node 1B ÷ binding_graph_node: 1.25×")
	assert.NotContains(t, s, "graph_node 10B", "a failed binding row divides nothing")
	assert.NotContains(t, s, "graph_node 100B")
	assert.NotContains(t, s, "h2d_async_64B ÷", "sim rows are left out")

	out.Reset()
	printBreakdown(&out, &Report{})
	assert.Empty(t, out.String(), "no pairs, no section")
}

func TestByHandTableDividesStagedRowsByCppStaging(t *testing.T) {
	rep := &Report{Meta: Meta{Backends: []string{"cuda"}, GPU: "Test GPU"}}
	add := func(r Result) { rep.Results = append(rep.Results, r) }
	const size = 256 << 20
	for pass, v := range []float64{40, 44, 40, 36} {
		add(Result{Impl: "cpp", Scenario: "h2d_pinned", Size: size, Unit: "GB/s", Value: 50, Checked: true, Pass: pass + 1})
		add(Result{Impl: "cpp", Scenario: "h2d_staged", Size: size, Unit: "GB/s", Value: v, Checked: true, Pass: pass + 1})
	}
	for round, v := range []float64{42, 38, 38} {
		add(Result{Impl: "gpuactor", Backend: "cuda", Scenario: "h2d_staged", Size: size, Unit: "GB/s", Value: v, Checked: true, Round: round + 1})
	}
	var out bytes.Buffer
	printTables(&out, rep)
	s := out.String()
	require.Contains(t, s, "against C++ doing the same by hand")
	hand := s[strings.Index(s, "against C++ doing the same by hand"):]
	// Rounds over the by-hand passes around each: 42/42, 38/42, 38/38.
	assert.Contains(t, hand, "1.00×", "median of the rounds' ratios")
	assert.Contains(t, hand, "0.90–1.00×", "their range")
	assert.Contains(t, hand, "0.80×", "the by-hand mean 40 over the pinned target 50")
	assert.Contains(t, hand, "22%", "the by-hand passes differ by 44 ÷ 36 − 1")
	main := s[:strings.Index(s, "against C++ doing the same by hand")]
	assert.Contains(t, main, "0.76×", "the main table still holds the row to pinned: median of 42, 38, 38 over 50")

	assert.NotContains(t, s, "pageable memory", "no pageable C++ row, no pageable section")

	out.Reset()
	printByHand(&out, &Report{Results: rep.Results[len(rep.Results)-3:]})
	assert.Empty(t, out.String(), "no by-hand C++ row, no section")

	// With the runtime's pageable copy in the same passes, a section of its own.
	for pass := range 4 {
		add(Result{Impl: "cpp", Scenario: "h2d_pageable", Size: size, Unit: "GB/s", Value: 20, Checked: true, Pass: pass + 1})
	}
	out.Reset()
	printTables(&out, rep)
	s = out.String()
	require.Contains(t, s, "against the runtime's own copy of pageable memory")
	pageable := s[strings.Index(s, "against the runtime's own copy of pageable memory"):]
	assert.Contains(t, pageable, "1.90×", "the median of the rounds 42, 38, 38 over the pageable 20")
	assert.Contains(t, pageable, "1.90–2.10×")
	assert.Contains(t, pageable, "0.40×", "pageable 20 over the pinned target 50")
}

func TestCPUProfileWritesAFile(t *testing.T) {
	stop, err := startProfile("")
	require.NoError(t, err)
	stop()
	path := filepath.Join(t.TempDir(), "cpu.prof")
	o, err := parseFlags([]string{"-cpuprofile", path})
	require.NoError(t, err)
	stop, err = startProfile(o.cpuProfile)
	require.NoError(t, err)
	stop()
	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Positive(t, st.Size(), "a profile, even of nothing, has a header")
	_, err = startProfile(filepath.Join(t.TempDir(), "no", "such", "dir", "cpu.prof"))
	assert.Error(t, err)
}
