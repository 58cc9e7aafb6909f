package main

import (
	"fmt"
	"io"
	"slices"
)

// differences are pairs of gpuactor rows whose difference in time, not their ratio, is what a
// target names: the issue holds group_roundtrip to at most 1 µs over launch_roundtrip. The
// steps between them say where a gap comes from: stream_roundtrip is launch_roundtrip on a
// stream of its own run where group_roundtrip runs, after work on many streams.
var differences = []struct{ row, over, what string }{
	{"group_roundtrip", "launch_roundtrip", "what a job through Do adds to a launch round trip (target ≤ +1 µs)"},
	{"stream_roundtrip", "launch_roundtrip", "a stream of its own, run after the many-stream rows, over the device's own stream run early"},
	{"group_roundtrip", "stream_roundtrip", "the group's own cost: Do over the same launch on a stream of its own, at the same point of the run"},
}

// cppDifferences are gpuactor rows whose target is a difference from their C++ row rather
// than a ratio: issue 42 holds the Close of a buffer whose last use has completed to what
// cudaFree costs plus at most 10 µs, whatever cudaFree itself costs on the host.
var cppDifferences = []struct{ row, what string }{
	{"free_after_done", "a Close awaited after the buffer's last use completed, over cudaFree alone (target ≤ +10 µs)"},
	{"free_after_done_device", "device.Buffer.Close (after every stream) of the same, over cudaFree alone"},
}

// roundDiffsOverCpp is, for each round of gpuactor's row on backend, its figure minus the mean
// of the C++ passes just before and after that round (as roundRatios divides by it).
func roundDiffsOverCpp(rep *Report, backend, row string) []float64 {
	var diffs []float64
	for _, g := range rep.Results {
		if g.Impl != "gpuactor" || g.Round == 0 || g.Backend != backend || g.Scenario != row || !g.Checked {
			continue
		}
		passes := &Report{Results: slices.DeleteFunc(slices.Clone(rep.Results), func(c Result) bool {
			return c.Impl == "cpp" && c.Pass != g.Round && c.Pass != g.Round+1
		})}
		if base, _ := lookupRow(passes, "cpp", refOf(row), g, false); base != nil {
			diffs = append(diffs, g.Value-*base)
		}
	}
	return diffs
}

// printDifferences writes, for each of differences that ran on the GPU, the difference of the
// two rows' p50 and p99 in each round, as the median and range over rounds; and likewise for
// each of cppDifferences, the row minus its C++ row.
func printDifferences(w io.Writer, rep *Report) {
	var lines []string
	add := func(row, over, what string) {
		for _, p99 := range []bool{false, true} {
			_, diffs := roundPairs(rep, "cuda", row, over, 0, p99)
			if len(diffs) == 0 {
				continue
			}
			stat := "p50"
			if p99 {
				stat = "p99"
			}
			lines = append(lines, fmt.Sprintf("  %s − %s %s: %+.2f µs (%+.2f to %+.2f over %d round(s)) — %s",
				row, over, stat, median(slices.Clone(diffs)), slices.Min(diffs), slices.Max(diffs), len(diffs), what))
		}
	}
	suffixes := variantSuffixes(rep)
	for _, d := range differences {
		for _, suf := range suffixes {
			add(d.row+suf, d.over+suf, d.what)
		}
	}
	for _, d := range cppDifferences {
		for _, suf := range suffixes {
			row := d.row + suf
			if diffs := roundDiffsOverCpp(rep, "cuda", row); len(diffs) > 0 {
				lines = append(lines, fmt.Sprintf("  %s − C++ %s p50: %+.2f µs (%+.2f to %+.2f over %d round(s)) — %s",
					row, refOf(row), median(slices.Clone(diffs)), slices.Min(diffs), slices.Max(diffs), len(diffs), d.what))
			}
		}
	}
	// A tuning A/B (-waiter-query): each row with the setting on, minus the same row off, of
	// the same round.
	on, off := variantSuffix("on"), variantSuffix("off")
	if slices.Contains(suffixes, on) && slices.Contains(suffixes, off) {
		seen := map[string]bool{}
		for _, r := range rep.Results {
			base := baseScenario(r.Scenario)
			if r.Impl != "gpuactor" || r.Backend != "cuda" || r.Unit != "us" || seen[base] {
				continue
			}
			seen[base] = true
			add(base+on, base+off, "waiter queries on, over off (below 0: faster with them)")
		}
	}
	if len(lines) == 0 {
		return
	}
	fmt.Fprintln(w, "\n== differences on cuda: a gpuactor row minus another, or minus C++, of the same round")
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
}

// variantSuffixes are the tuning variants' suffixes among rep's rows ("" for rows without one),
// in the order they first appear.
func variantSuffixes(rep *Report) []string {
	out := []string{""}
	for _, r := range rep.Results {
		if suf := r.Scenario[len(baseScenario(r.Scenario)):]; suf != "" && !slices.Contains(out, suf) {
			out = append(out, suf)
		}
	}
	return out
}
