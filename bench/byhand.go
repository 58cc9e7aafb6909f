package main

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// printByHand writes the rows that have a byHand C++ row beside their target: each one's
// figure over C++ doing the same work by hand in the same run (the median and range of the
// rounds' ratios, with -rounds). A staged copy is held to pinned memory's bandwidth, and the
// host decides how near staging can come to it (memory bandwidth the copies, the slots and the
// DMA share); the by-hand row says where that ceiling sat in this run, and so whether a
// shortfall is the library's or the host's.
func printByHand(w io.Writer, rep *Report) {
	byHand := map[string]string{}
	for _, s := range scenarios() {
		if s.byHand != "" {
			byHand[s.name] = s.byHand
		}
	}
	var tw *tabwriter.Writer
	for _, r := range collapseRounds(rep.Results) {
		hand, ok := byHand[r.Scenario]
		if r.Impl != "gpuactor" || r.Backend != "cuda" || !ok {
			continue
		}
		cpp, drift := lookupRow(rep, "cpp", hand, r, false)
		if cpp == nil {
			continue
		}
		if tw == nil {
			fmt.Fprintln(w, "\n== against C++ doing the same by hand, in the same run (ratio = gpuactor ÷ C++ by hand; by hand ÷ C++ target: the by-hand row over the target the row is held to above)")
			tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
			fmt.Fprintln(tw, "scenario\tsize\tunit\tC++ by hand\tC++ drift\tgpuactor\tratio\tratio range\tby hand ÷ C++ target\t")
		}
		rat, spread := ratio(r.Value, cpp), "-"
		if med, lo, hi, ok := roundRatiosAgainst(rep, r, hand, false); ok {
			rat, spread = fmt.Sprintf("%.2f×", med), rangeLabel(lo, hi)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", r.Scenario, sizeLabel(r.Size), r.Unit,
			numPtr(cpp), driftLabel(cpp, drift), num(r.Value, r.Checked), rat, spread, ratio(*cpp, lookup(rep, "cpp", r, false)))
	}
	if tw != nil {
		tw.Flush()
	}
}
