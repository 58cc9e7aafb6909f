package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// printIsolated writes, per backend, each isolated row beside the same row in process: both
// figures (medians over rounds), the isolated one over the in-process one and, for times, the
// difference, each the median over rounds of the two rows of one round (so the same C++
// passes, on a drifting host), with the range over rounds. On the GPU it says whether the row
// met its target (isolatedRows). The rows' ratios to C++ are in the backend's main table.
func printIsolated(w io.Writer, rep *Report) {
	rows := collapseRounds(rep.Results)
	for _, b := range rep.Meta.Backends {
		var tw *tabwriter.Writer
		for _, ir := range isolatedRows {
			for _, r := range rows {
				if r.Impl != "gpuactor" || r.Backend != b || r.Scenario != isolatedPrefix+ir.base {
					continue
				}
				i := slices.IndexFunc(rows, func(o Result) bool {
					return o.Impl == "gpuactor" && o.Backend == b && o.Scenario == ir.base && o.Size == r.Size
				})
				if i < 0 {
					continue
				}
				in := rows[i]
				if tw == nil {
					fmt.Fprintf(w, "\n== isolated devices on %s: each isolated row (its backend in a worker process, every call over shared-memory rings) beside the same row in process, in the same round (ratio = isolated ÷ in-process; difference = isolated − in-process, times only)\n", b)
					tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
					fmt.Fprintln(tw, "scenario\tsize\tunit\tin-process\tisolated\tratio\tratio range\tdifference\ttarget\t")
				}
				for _, row := range expand(r) {
					ratios, diffs := roundPairs(rep, b, isolatedPrefix+ir.base, ir.base, r.Size, row.p99)
					rat, spread, diff, target := "-", "-", "-", "-"
					if len(ratios) > 0 {
						rat, spread = fmt.Sprintf("%.2f×", median(ratios)), rangeLabel(slices.Min(ratios), slices.Max(ratios))
						if !isRate(r.Unit) {
							diff = fmt.Sprintf("%+.2f", median(diffs))
						}
						if b == "cuda" && r.Checked && in.Checked {
							target = ir.verdict(median(ratios), median(diffs), row.p99)
						}
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", row.label, sizeLabel(r.Size), r.Unit,
						num(pickIn(in, row.p99), in.Checked), num(row.value, r.Checked), rat, spread, diff, target)
				}
			}
		}
		if tw != nil {
			tw.Flush()
		}
	}
}

// pickIn is in's figure, its p99 or its p50.
func pickIn(in Result, p99 bool) float64 {
	if v := pick(&in, p99); v != nil {
		return *v
	}
	return 0
}

// verdict says whether the isolated row met its target, given the median ratio and difference
// over rounds; "-" when it has none (the p99 of a row whose target is on its p50).
func (r isolatedRow) verdict(ratio, diff float64, p99 bool) string {
	var target string
	var met bool
	switch {
	case r.maxRatio > 0 && !p99:
		target, met = fmt.Sprintf("≤ %.2f×", r.maxRatio), ratio <= r.maxRatio
	case r.minRatio > 0 && !p99:
		target, met = fmt.Sprintf("≥ %.2f×", r.minRatio), ratio >= r.minRatio
	case r.maxExtra > 0 && !p99:
		target, met = fmt.Sprintf("≤ %+.2f", r.maxExtra), diff <= r.maxExtra
	default:
		return "-"
	}
	if met {
		return target + " met"
	}
	return target + " MISSED"
}

// isRate reports whether unit is a rate (higher is better), not a time.
func isRate(unit string) bool { return strings.HasSuffix(unit, "/s") }
