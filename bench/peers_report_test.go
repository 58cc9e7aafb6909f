package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPeerColumnsAreMediansOfPerPassRatios: each peer figure is divided by the C++ figure of
// its own pass, and the table and the JSON summary carry the median and range of those ratios
// beside the peer's median figure, as for gpuactor's rounds.
func TestPeerColumnsAreMediansOfPerPassRatios(t *testing.T) {
	rep := &Report{Meta: Meta{Backends: []string{"cuda"}, GPU: "Test GPU"}}
	add := func(r Result) { rep.Results = append(rep.Results, r) }
	p := func(v float64) *float64 { return &v }
	for pass, v := range []float64{8, 10, 8} {
		add(Result{Impl: "cpp", Scenario: "launch_roundtrip", Unit: "us", Value: v, P99: p(2 * v), Checked: true, Pass: pass + 1})
	}
	// CuPy: 8.8/8, 10/10, 12/8 → 1.10, 1.00, 1.50; p99 16/16, 30/20, 16/16 → 1.00, 1.50, 1.00.
	for pass, v := range []float64{8.8, 10, 12} {
		add(Result{Impl: "cupy", Scenario: "launch_roundtrip", Unit: "us", Value: v, P99: p([]float64{16, 30, 16}[pass]), Checked: true, Pass: pass + 1})
	}
	// cuda.core failed its check in pass 2: that pass has no ratio.
	for pass, v := range []float64{7.2, 99, 8.8} {
		add(Result{Impl: "cuda.core", Scenario: "launch_roundtrip", Unit: "us", Value: v, P99: p(20), Checked: pass != 1, Pass: pass + 1})
	}
	for round, v := range []float64{9, 11} {
		add(Result{Impl: "gpuactor", Backend: "cuda", Scenario: "launch_roundtrip", Unit: "us", Value: v, P99: p(2 * v), Checked: true, Round: round + 1})
	}
	var out bytes.Buffer
	printTables(&out, rep)
	s := out.String()
	p50 := lineOf(t, s, "launch_roundtrip p50")
	assert.Contains(t, p50, "10.0 1.10× (1.00–1.50×)", "CuPy: the median figure, then the median (range) of its ratios")
	assert.Contains(t, p50, "7.20 0.90× (0.90–1.10×)", "cuda.core: the checked passes alone (medians by nearest rank, as the bench takes them)")
	p99 := lineOf(t, s, "launch_roundtrip p99")
	assert.Contains(t, p99, "16.0 1.00× (1.00–1.50×)")

	// gpuactor over each peer, per round over the peer's passes around it: CuPy 9/9.4 and
	// 11/11; cuda.core, whose pass 2 failed its check, 9/7.2 and 11/8.8.
	peers := s[strings.Index(s, "against the Python peers"):]
	assert.Contains(t, peers, "launch_roundtrip p50 (us): ÷ cupy 0.96× (0.96–1.00× over 2 round(s)), ÷ cuda.core 1.25× (1.25–1.25× over 2 round(s))")

	sum := summarize(rep)
	b, err := json.Marshal(sum)
	require.NoError(t, err)
	var cupy *Summary
	for i := range sum {
		if sum[i].Impl == "cupy" && sum[i].Stat == "p50" {
			cupy = &sum[i]
		}
	}
	require.NotNil(t, cupy, "%s", b)
	assert.InDelta(t, 10.0, cupy.Value, 1e-9)
	assert.InDelta(t, 1.10, *cupy.Ratio, 1e-9)
	assert.InDelta(t, 1.00, *cupy.RatioLo, 1e-9)
	assert.InDelta(t, 1.50, *cupy.RatioHi, 1e-9)
	assert.Equal(t, 3, cupy.Ratios)
	assert.Equal(t, "launch_roundtrip", cupy.Scenario)
	// gpuactor's own entry: rounds over the C++ passes around them, 9/9 and 11/9.
	require.Equal(t, "gpuactor", sum[0].Impl)
	assert.InDelta(t, 9.0, sum[0].Value, 1e-9, "the median of 9 and 11, by nearest rank")
	assert.InDelta(t, 1.0, *sum[0].Ratio, 1e-9, "9 over the mean of passes 1 and 2 (9)")
	assert.InDelta(t, 11.0/9, *sum[0].RatioHi, 1e-9, "11 over the mean of passes 2 and 3 (9)")
	assert.Equal(t, 2, sum[0].Ratios)
	assert.InDelta(t, 9/9.4, sum[0].Over["cupy"].Median, 1e-9)
	assert.InDelta(t, 1.0, sum[0].Over["cupy"].Hi, 1e-9)
	assert.Equal(t, 2, sum[0].Over["cupy"].Rounds)
	assert.InDelta(t, 1.25, sum[0].Over["cuda.core"].Median, 1e-9)
}

// TestPeersThatRanOnceShowTheirFigureAlone: reports made when the peers ran once (pass 0) still
// show the figure, with no ratio.
func TestPeersThatRanOnceShowTheirFigureAlone(t *testing.T) {
	rep := &Report{Meta: Meta{Backends: []string{"cuda"}, GPU: "Test GPU"}, Results: []Result{
		{Impl: "cpp", Scenario: "launch_enqueue", Unit: "us/launch", Value: 4, Checked: true, Pass: 1},
		{Impl: "cupy", Scenario: "launch_enqueue", Unit: "us/launch", Value: 5.5, Checked: true},
		{Impl: "gpuactor", Backend: "cuda", Scenario: "launch_enqueue", Unit: "us/launch", Value: 4.4, Checked: true},
	}}
	var out bytes.Buffer
	printTables(&out, rep)
	line := lineOf(t, out.String(), "launch_enqueue")
	assert.Contains(t, line, "4.40 1.10× 5.50 - - -", "CuPy's figure, no ratio; no cuda.core")
	assert.Contains(t, out.String(), "launch_enqueue (us/launch): ÷ cupy 0.80×", "gpuactor over CuPy's one figure")
	assert.NotContains(t, out.String(), "cuda.core 0", "no cuda.core figure, no ratio to it")
}

func lineOf(t *testing.T, s, prefix string) string {
	t.Helper()
	for _, l := range strings.Split(s, "\n") {
		if l = strings.Join(strings.Fields(l), " "); strings.HasPrefix(l, prefix) { // columns one space apart
			return l
		}
	}
	t.Fatalf("no line %q in\n%s", prefix, s)
	return ""
}
