package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestDifferencesSubtractRowsOfTheSameRound: group_roundtrip − launch_roundtrip, and the
// steps between them, as the median and range of each round's difference, p50 and p99.
func TestDifferencesSubtractRowsOfTheSameRound(t *testing.T) {
	rep := &Report{Meta: Meta{Backends: []string{"cuda"}, GPU: "Test GPU"}}
	add := func(row string, round int, p50, p99 float64) {
		rep.Results = append(rep.Results, Result{Impl: "gpuactor", Backend: "cuda", Scenario: row, Unit: "us", Value: p50, P99: &p99, Checked: true, Round: round})
	}
	for round, v := range []float64{10, 11, 10.5} {
		add("launch_roundtrip", round+1, v, 2*v)
		add("stream_roundtrip", round+1, v+1, 2*v+1)
		add("group_roundtrip", round+1, v+1+0.2*float64(round+1), 2*v+3)
	}
	add("group_roundtrip", 4, 20, 40) // a round without its launch_roundtrip: left out
	var out bytes.Buffer
	printDifferences(&out, rep)
	s := out.String()
	assert.Contains(t, s, "group_roundtrip − launch_roundtrip p50: +1.40 µs (+1.20 to +1.60 over 3 round(s))")
	assert.Contains(t, s, "group_roundtrip − launch_roundtrip p99: +3.00 µs")
	assert.Contains(t, s, "stream_roundtrip − launch_roundtrip p50: +1.00 µs (+1.00 to +1.00 over 3 round(s))")
	assert.Contains(t, s, "group_roundtrip − stream_roundtrip p50: +0.40 µs (+0.20 to +0.60 over 3 round(s))")

	out.Reset()
	printDifferences(&out, &Report{Results: rep.Results[:1]})
	assert.Empty(t, out.String(), "no pair, no section")
}

// TestDifferencesOfAWaiterQueryAB: with -waiter-query off,on each difference is taken within
// each setting, and each row on is shown over the same row off, round by round.
func TestDifferencesOfAWaiterQueryAB(t *testing.T) {
	rep := &Report{}
	add := func(row string, round int, p50 float64) {
		p99 := 2 * p50
		rep.Results = append(rep.Results, Result{Impl: "gpuactor", Backend: "cuda", Scenario: row, Unit: "us", Value: p50, P99: &p99, Checked: true, Round: round})
	}
	for round, v := range []float64{10, 11, 10.5} {
		add("launch_roundtrip@waiter-query=off", round+1, v)
		add("group_roundtrip@waiter-query=off", round+1, v+1)
		add("launch_roundtrip@waiter-query=on", round+1, v-1.5)
		add("group_roundtrip@waiter-query=on", round+1, v-0.5)
	}
	var out bytes.Buffer
	printDifferences(&out, rep)
	s := out.String()
	assert.Contains(t, s, "group_roundtrip@waiter-query=off − launch_roundtrip@waiter-query=off p50: +1.00 µs")
	assert.Contains(t, s, "group_roundtrip@waiter-query=on − launch_roundtrip@waiter-query=on p50: +1.00 µs")
	assert.Contains(t, s, "launch_roundtrip@waiter-query=on − launch_roundtrip@waiter-query=off p50: -1.50 µs (-1.50 to -1.50 over 3 round(s))")
	assert.Contains(t, s, "group_roundtrip@waiter-query=on − group_roundtrip@waiter-query=off p99: -3.00 µs")
}

// TestDifferencesOverCpp: free_after_done minus the mean of the C++ passes around each round,
// as the median and range over rounds; a round without its passes is left out.
func TestDifferencesOverCpp(t *testing.T) {
	rep := &Report{}
	cpp := func(pass int, v float64) {
		rep.Results = append(rep.Results, Result{Impl: "cpp", Scenario: "free_after_done", Size: 1 << 20, Unit: "us", Value: v, Checked: true, Pass: pass})
	}
	row := func(round int, v float64) {
		rep.Results = append(rep.Results, Result{Impl: "gpuactor", Backend: "cuda", Scenario: "free_after_done", Size: 1 << 20, Unit: "us", Value: v, Checked: true, Round: round})
	}
	cpp(1, 20)
	cpp(2, 30)
	cpp(3, 40)
	cpp(4, 50)
	row(1, 29) // over 25: +4
	row(2, 41) // over 35: +6
	row(3, 50) // over 45: +5
	row(5, 99) // no passes around it
	var out bytes.Buffer
	printDifferences(&out, rep)
	assert.Contains(t, out.String(), "free_after_done − C++ free_after_done p50: +5.00 µs (+4.00 to +6.00 over 3 round(s))")
}
