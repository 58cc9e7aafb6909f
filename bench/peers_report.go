package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// peerImpls are the Python peers (bench/peers/peers.py), in the table's order.
var peerImpls = []string{"cupy", "cuda.core"}

// peerFigure is a Python peer's figure for a gpuactor row: its figure for the row's C++
// reference (at the row's size) as the median over the passes it ran in, and, when its passes
// are numbered, the median and range of each pass's figure over the C++ figure of the same
// pass: the same median and range the rounds give gpuactor's rows.
type peerFigure struct {
	value         float64
	ratio, lo, hi float64
	ratios        int // how many passes had a C++ figure to divide by; 0: no ratio
}

// peerOf is impl's peerFigure for gpuactor's row r (its p99 or not); ok is false when the
// peer has no checked figure for it. Reports whose peers ran once (pass 0) get the figure
// alone.
func peerOf(rep *Report, impl string, r Result, p99 bool) (f peerFigure, ok bool) {
	ref := refOf(r.Scenario)
	mine := matchSize(rep.Results, impl, ref, r.Size, p99)
	if len(mine) == 0 {
		return f, false
	}
	var values, ratios []float64
	for _, c := range mine {
		v := *pick(&c, p99)
		values = append(values, v)
		if c.Pass == 0 {
			continue
		}
		cpp := slices.DeleteFunc(slices.Clone(rep.Results), func(o Result) bool { return o.Pass != c.Pass })
		if base := matchSize(cpp, "cpp", ref, r.Size, p99); len(base) > 0 {
			if b := *pick(&base[0], p99); b > 0 {
				ratios = append(ratios, v/b)
			}
		}
	}
	f.value = median(values)
	if f.ratios = len(ratios); f.ratios > 0 {
		f.ratio, f.lo, f.hi = median(ratios), slices.Min(ratios), slices.Max(ratios)
	}
	return f, true
}

// matchSize is impl's checked results for scenario ref that have the figure asked for, at
// size when any are, else those where one side has no size (as lookupRow matches).
func matchSize(results []Result, impl, ref string, size int64, p99 bool) []Result {
	var same, loose []Result
	for _, c := range results {
		if c.Impl != impl || c.Scenario != ref || !c.Checked || pick(&c, p99) == nil {
			continue
		}
		switch {
		case c.Size == size:
			same = append(same, c)
		case c.Size == 0 || size == 0:
			loose = append(loose, c)
		}
	}
	if len(same) > 0 {
		return same
	}
	return loose
}

// peerCells are the table's cells for impl beside gpuactor's row r: the peer's figure, and its
// ratio to C++ as median (range).
func peerCells(rep *Report, impl string, r Result, p99 bool) (figure, rat string) {
	f, ok := peerOf(rep, impl, r, p99)
	if !ok {
		return "-", "-"
	}
	if f.ratios == 0 {
		return num(f.value, true), "-"
	}
	return num(f.value, true), fmt.Sprintf("%.2f× (%s)", f.ratio, rangeLabel(f.lo, f.hi))
}

// overPeer is gpuactor's row r (the p99 or not, its figure value) over impl's figure for it:
// with rounds, each round's figure over the mean of the peer's passes just before and after
// it, as the median and range (n rounds); with none, value over the mean of the peer's passes.
// ok is false when the peer has no figure for the row.
func overPeer(rep *Report, impl string, r Result, value float64, p99 bool) (med, lo, hi float64, n int, ok bool) {
	if med, lo, hi, ok := roundRatiosOver(rep, r, impl, refOf(r.Scenario), p99); ok {
		return med, lo, hi, peerRounds(rep, impl, r, p99), true
	}
	if v := lookup(rep, impl, r, p99); v != nil && *v > 0 {
		q := value / *v
		return q, q, q, 0, true
	}
	return 0, 0, 0, 0, false
}

// peerRounds counts the rounds of r that had a figure of impl's in a pass around them.
func peerRounds(rep *Report, impl string, r Result, p99 bool) int {
	n := 0
	ref := refOf(r.Scenario)
	for _, g := range rep.Results {
		if g.Impl != "gpuactor" || g.Round == 0 || g.Backend != r.Backend || g.Scenario != r.Scenario || g.Size != r.Size || !g.Checked || pick(&g, p99) == nil {
			continue
		}
		around := slices.DeleteFunc(slices.Clone(rep.Results), func(c Result) bool { return c.Pass != g.Round && c.Pass != g.Round+1 })
		if len(matchSize(around, impl, ref, r.Size, p99)) > 0 {
			n++
		}
	}
	return n
}

// printAgainstPeers writes gpuactor's figure over each Python peer's for every GPU row a peer
// ran, per round over the peer's passes around it, as the median and range: the issue's
// "below CuPy and cuda.core" read directly.
func printAgainstPeers(w io.Writer, rep *Report) {
	var lines []string
	for _, r := range collapseRounds(rep.Results) {
		if r.Impl != "gpuactor" || r.Backend != "cuda" || !r.Checked {
			continue
		}
		for _, row := range expand(r) {
			var cells []string
			for _, impl := range peerImpls {
				med, lo, hi, n, ok := overPeer(rep, impl, r, row.value, row.p99)
				if !ok {
					continue
				}
				cell := fmt.Sprintf("÷ %s %.2f×", impl, med)
				if n > 0 {
					cell += fmt.Sprintf(" (%s over %d round(s))", rangeLabel(lo, hi), n)
				}
				cells = append(cells, cell)
			}
			if len(cells) == 0 {
				continue
			}
			label := row.label
			if r.Size > 0 {
				label += " " + sizeLabel(r.Size)
			}
			lines = append(lines, fmt.Sprintf("  %s (%s): %s", label, r.Unit, strings.Join(cells, ", ")))
		}
	}
	if len(lines) == 0 {
		return
	}
	fmt.Fprintln(w, "\n== gpuactor against the Python peers on cuda: gpuactor ÷ peer, each round over the peer's passes around it (times: below 1 is faster than the peer; GB/s: above 1 is faster)")
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
}
