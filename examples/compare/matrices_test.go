package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// p2pBandwidth3Go is the port's output on three GPUs with --p2p_read, with warnings on stderr
// between a title and its matrix (the harness reads both streams together) and a latency
// matrix cut off after its first row, as a program that died there leaves it.
const p2pBandwidth3Go = "Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)\n" +
	"warning: GPU0-GPU1, 5 copies: queueing took 12ms, longer than the delay kernel's timeout\n" +
	"   D\\D     0      1      2 \n     0   9.00   9.00   9.00 \n     1   9.00   9.00   9.00 \n     2   9.00   9.00   9.00 \n" +
	"Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)\n" +
	"warning: GPU0-GPU0, 5 copies: queueing took 6ms, longer than the delay kernel's timeout\n" +
	"   D\\D     0      1      2 \n     0 3900.00 360.00 370.00 \n     1 390.00 3950.00 391.00 \n     2 392.00 393.00 3960.00 \n" +
	"Unidirectional P2P=Enabled Bandwidth (P2P Reads) Matrix (GB/s)\n" +
	"   D\\D     0      1      2 \n     0 3901.00 382.00 383.00 \n     1 384.00 3902.00 385.00 \n     2 386.00 387.00 3903.00 \n" +
	"P2P=Enabled Latency (P2P Writes) Matrix (us)\n   GPU     0      1      2 \n     0   1.80   2.25   3.30 \n" +
	"FAIL: something broke\n"

func TestParseMatricesEveryCell(t *testing.T) {
	_, got := parse(byName(t, "p2pbandwidthlatency"), p2pBandwidth3Go)
	want := map[string]float64{
		"unidirectional P2P writes 0-0": 3900, "unidirectional P2P writes 0-1": 360, "unidirectional P2P writes 0-2": 370,
		"unidirectional P2P writes 1-0": 390, "unidirectional P2P writes 1-1": 3950, "unidirectional P2P writes 1-2": 391,
		"unidirectional P2P writes 2-0": 392, "unidirectional P2P writes 2-1": 393, "unidirectional P2P writes 2-2": 3960,
		"unidirectional P2P reads 0-0": 3901, "unidirectional P2P reads 0-1": 382, "unidirectional P2P reads 0-2": 383,
		"unidirectional P2P reads 1-0": 384, "unidirectional P2P reads 1-1": 3902, "unidirectional P2P reads 1-2": 385,
		"unidirectional P2P reads 2-0": 386, "unidirectional P2P reads 2-1": 387, "unidirectional P2P reads 2-2": 3903,
		"GPU latency P2P writes 0-0": 1.80, "GPU latency P2P writes 0-1": 2.25, "GPU latency P2P writes 0-2": 3.30,
	}
	assert.Equal(t, want, got)

	// A row numbered past any host's GPU count is not a row of the matrix.
	_, got = parse(byName(t, "p2pbandwidthlatency"), "P2P=Enabled Latency (P2P Writes) Matrix (us)\n   GPU     0 \n     0   1.80 \n  99999   2.00 \n")
	assert.Equal(t, map[string]float64{"GPU latency P2P writes 0-0": 1.80}, got)
}

// outcomeOf is a run that printed the given cells of one matrix.
func outcomeOf(m matrix, cells map[[2]int]float64) outcome {
	o := outcome{status: "PASS", timings: map[string]float64{}}
	for ij, v := range cells {
		o.timings[m.cellName(ij[0], ij[1])] = v
	}
	return o
}

func TestReportEveryPair(t *testing.T) {
	p := byName(t, "p2pbandwidthlatency")
	var bw, lat matrix
	for _, m := range p.matrices {
		switch m.name {
		case "unidirectional P2P writes":
			bw = m
		case "GPU latency P2P writes":
			lat = m
		}
	}
	require.NotEmpty(t, bw.name)
	require.NotEmpty(t, lat.name)
	merge := func(outs ...outcome) outcome {
		all := outcome{status: "PASS", timings: map[string]float64{}}
		for _, o := range outs {
			for k, v := range o.timings {
				all.timings[k] = v
			}
		}
		return all
	}
	// Bandwidth: Go is 0.90× C at 1-0 (the worst: lower), 1.10× at 0-1. Latency: Go is 1.50×
	// C at 0-1 (the worst: higher), C's two runs there 2.0 and 3.0 µs (spread 1.50), and 1-1
	// is missing from Go's runs.
	c1 := merge(outcomeOf(bw, map[[2]int]float64{{0, 0}: 100, {0, 1}: 100, {1, 0}: 100, {1, 1}: 100}),
		outcomeOf(lat, map[[2]int]float64{{0, 0}: 2, {0, 1}: 2, {1, 0}: 2, {1, 1}: 2}))
	c2 := merge(outcomeOf(bw, map[[2]int]float64{{0, 0}: 100, {0, 1}: 100, {1, 0}: 100, {1, 1}: 100}),
		outcomeOf(lat, map[[2]int]float64{{0, 0}: 2, {0, 1}: 3, {1, 0}: 2, {1, 1}: 2}))
	g := merge(outcomeOf(bw, map[[2]int]float64{{0, 0}: 100, {0, 1}: 110, {1, 0}: 90, {1, 1}: 100}),
		outcomeOf(lat, map[[2]int]float64{{0, 0}: 2, {0, 1}: 3.75, {1, 0}: 2}))
	results := []portResult{
		{port: byName(t, "simplep2p"), variants: []variantResult{{c: []outcome{{status: "PASS"}}, g: []outcome{{status: "PASS"}}}}},
		{port: p, variants: []variantResult{{c: []outcome{c1, c2}, g: []outcome{g, g}}}},
	}
	var sb strings.Builder
	reportMatrices(&sb, results)
	out := sb.String()
	assert.Contains(t, out, "| p2pbandwidthlatency: unidirectional P2P writes (GB/s) | 4 | 0.90–1.10 | 1-0: 0.90 (higher is better) | 1.00 |")
	assert.Contains(t, out, "| p2pbandwidthlatency: GPU latency P2P writes (us) | 4 | 1.00–1.50 | 0-1: 1.50 | 1.50 |")
	assert.Contains(t, out, "### p2pbandwidthlatency: GPU latency P2P writes (us), Go/C\n\n| row \\ column | 0 | 1 |\n|---|---|---|\n| 0 | 1.00 | 1.50 |\n| 1 | 1.00 | — |\n")
	assert.NotContains(t, out, "simplep2p", "a port without matrices has no pairs table")
	assert.NotContains(t, out, "P2P reads", "a matrix no run printed is left out")

	sb.Reset()
	reportMatrices(&sb, results[:1])
	assert.Empty(t, sb.String(), "no section without matrices")
}
