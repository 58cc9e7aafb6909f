package main

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// printByHand writes the rows shown beside C++ rows other than their target, a table for
// each kind: C++ doing the same work by hand (byHand), and the runtime's own copy of pageable
// memory (pageable). Each row's figure is over that C++ row in the same run (the median and
// range of the rounds' ratios, with -rounds).
//
// A staged copy is held to pinned memory's bandwidth, and the host decides how near staging
// can come to it (memory bandwidth the copies, the slots and the DMA share); the by-hand row
// says where that ceiling sat in this run, and so whether a shortfall is the library's or the
// host's. The pageable row is what a program holding ordinary memory gets without gpuactor: a
// staged copy must beat it at every size.
func printByHand(w io.Writer, rep *Report) {
	printBeside(w, rep, func(s scenario) string { return s.byHand },
		"against C++ doing the same by hand, in the same run (ratio = gpuactor ÷ C++ by hand; by hand ÷ C++ target: the by-hand row over the target the row is held to above)",
		"C++ by hand", "by hand ÷ C++ target")
	printBeside(w, rep, func(s scenario) string { return s.pageable },
		"against the runtime's own copy of pageable memory (cudaMemcpy from malloc'd memory), in the same run (ratio = gpuactor ÷ C++ pageable; must be ≥ 1 at every size)",
		"C++ pageable", "pageable ÷ C++ target")
}

// printBeside writes one such table: the gpuactor rows whose scenario names a C++ row with
// other, each over it.
func printBeside(w io.Writer, rep *Report, other func(scenario) string, title, col, targetCol string) {
	beside := map[string]string{}
	for _, s := range scenarios() {
		if o := other(s); o != "" {
			beside[s.name] = o
		}
	}
	var tw *tabwriter.Writer
	for _, r := range collapseRounds(rep.Results) {
		ref, ok := beside[r.Scenario]
		if r.Impl != "gpuactor" || r.Backend != "cuda" || !ok {
			continue
		}
		cpp, drift := lookupRow(rep, "cpp", ref, r, false)
		if cpp == nil {
			continue
		}
		if tw == nil {
			fmt.Fprintln(w, "\n== "+title)
			tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
			fmt.Fprintf(tw, "scenario\tsize\tunit\t%s\tC++ drift\tgpuactor\tratio\tratio range\t%s\t\n", col, targetCol)
		}
		rat, spread := ratio(r.Value, cpp), "-"
		if med, lo, hi, ok := roundRatiosAgainst(rep, r, ref, false); ok {
			rat, spread = fmt.Sprintf("%.2f×", med), rangeLabel(lo, hi)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", r.Scenario, sizeLabel(r.Size), r.Unit,
			numPtr(cpp), driftLabel(cpp, drift), num(r.Value, r.Checked), rat, spread, ratio(*cpp, lookup(rep, "cpp", r, false)))
	}
	if tw != nil {
		tw.Flush()
	}
}
