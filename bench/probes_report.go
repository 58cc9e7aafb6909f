package main

import (
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
)

// printProbes writes, for each gpuactor row on the GPU that has probes, each probe's figure
// (the C++ scenario's mean over its passes) and its ratio to the row's C++ reference in the
// same pass, as the median and range over passes: how much of the row's gap to C++ another way
// of doing its work would close, measured in C++ alone.
func printProbes(w io.Writer, rep *Report) {
	var tw *tabwriter.Writer
	for _, s := range scenarios() {
		if len(s.probes) == 0 {
			continue
		}
		for _, r := range collapseRounds(rep.Results) {
			if r.Impl != "gpuactor" || r.Backend != "cuda" || r.Scenario != s.name {
				continue
			}
			for _, row := range expand(r) {
				for _, probe := range s.probes {
					value, ratios := probeRatios(rep, probe, s.refName(), r.Size, row.p99)
					if len(ratios) == 0 {
						continue
					}
					if tw == nil {
						fmt.Fprintln(w, "\n== C++ probes on cuda: other ways C++ could do a row's work, over the row's C++ row in the same pass")
						tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
						fmt.Fprintln(tw, "row\tprobe\tunit\tprobe\t÷ C++ row\tpasses\t")
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.2f× (%s)\t%d\t\n", row.label, probe, r.Unit, num(value, true),
						median(slices.Clone(ratios)), rangeLabel(slices.Min(ratios), slices.Max(ratios)), len(ratios))
				}
			}
		}
	}
	if tw != nil {
		tw.Flush()
	}
}

// probeRatios is C++ scenario probe's mean figure at size, and its figure over C++ scenario
// ref's in each pass that has both.
func probeRatios(rep *Report, probe, ref string, size int64, p99 bool) (mean float64, ratios []float64) {
	var sum float64
	var n int
	for _, c := range matchSize(rep.Results, "cpp", probe, size, p99) {
		v := *pick(&c, p99)
		sum, n = sum+v, n+1
		pass := slices.DeleteFunc(slices.Clone(rep.Results), func(o Result) bool { return o.Pass != c.Pass })
		if base := matchSize(pass, "cpp", ref, size, p99); len(base) > 0 && *pick(&base[0], p99) > 0 {
			ratios = append(ratios, v / *pick(&base[0], p99))
		}
	}
	if n == 0 {
		return 0, nil
	}
	return sum / float64(n), ratios
}
