package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestProbesAreDividedByTheirRowsCppFigureOfTheSamePass: each C++ probe beside
// launch_roundtrip is shown with its mean and its ratio to C++'s launch_roundtrip of the same
// pass, p50 and p99.
func TestProbesAreDividedByTheirRowsCppFigureOfTheSamePass(t *testing.T) {
	rep := &Report{Meta: Meta{Backends: []string{"cuda"}, GPU: "Test GPU"}}
	p := func(v float64) *float64 { return &v }
	for pass, v := range []float64{8, 10} {
		rep.Results = append(rep.Results,
			Result{Impl: "cpp", Scenario: "launch_roundtrip", Unit: "us", Value: v, P99: p(2 * v), Checked: true, Pass: pass + 1},
			// 8.8/8 and 12/10: 1.10 and 1.20; p99 16/16 and 24/20.
			Result{Impl: "cpp", Scenario: "roundtrip_query_loop", Unit: "us", Value: []float64{8.8, 12}[pass], P99: p([]float64{16, 24}[pass]), Checked: true, Pass: pass + 1})
	}
	rep.Results = append(rep.Results, Result{Impl: "gpuactor", Backend: "cuda", Scenario: "launch_roundtrip", Unit: "us", Value: 10, P99: p(20), Checked: true})
	var out bytes.Buffer
	printTables(&out, rep)
	p50 := lineOf(t, out.String(), "launch_roundtrip p50 roundtrip_query_loop")
	assert.Contains(t, p50, "us 10.4 1.10× (1.10–1.20×) 2", "the mean 10.4, the median (nearest rank) and range of 1.10 and 1.20, over 2 passes")
	p99 := lineOf(t, out.String(), "launch_roundtrip p99 roundtrip_query_loop")
	assert.Contains(t, p99, "us 20.0 1.00× (1.00–1.20×) 2")
	assert.NotContains(t, out.String(), "roundtrip_event_sync ", "a probe that did not run has no line")

	out.Reset()
	printProbes(&out, &Report{Results: rep.Results[len(rep.Results)-1:]})
	assert.Empty(t, out.String(), "no probe figures, no table")
}
