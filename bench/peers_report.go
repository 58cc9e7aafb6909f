package main

import (
	"fmt"
	"slices"
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
