package main

import (
	"fmt"
	"slices"
)

// With -rounds, gpuactor's rows run several times on the GPU, each round between two passes
// of the C++ baseline. A shared GPU host's speed drifts by tens of percent between minutes,
// C++'s own figures included, so a single
// gpuactor run against C++ runs before and after it compares moments, not code. Each round's
// figure is divided by the mean of the C++ passes around it, and the table reports the median
// of those ratios and their range.

// collapseRounds returns results with each gpuactor row that ran in rounds folded into one:
// the median of its rounds' figures (and p99s), checked when every round was. Other results
// are kept as they are, in order.
func collapseRounds(results []Result) []Result {
	type key struct {
		backend, scenario string
		size              int64
	}
	var out []Result
	at := map[key]int{}
	values, p99s := map[key][]float64{}, map[key][]float64{}
	for _, r := range results {
		if r.Impl != "gpuactor" || r.Round == 0 {
			out = append(out, r)
			continue
		}
		k := key{r.Backend, r.Scenario, r.Size}
		i, ok := at[k]
		if !ok {
			i = len(out)
			at[k] = i
			c := r
			c.Round, c.rounds, c.Checked = 0, 0, true
			out = append(out, c)
		}
		out[i].rounds++
		out[i].Checked = out[i].Checked && r.Checked
		if r.Checked {
			values[k] = append(values[k], r.Value)
			if r.P99 != nil {
				p99s[k] = append(p99s[k], *r.P99)
			}
		}
	}
	for k, i := range at {
		if v := values[k]; len(v) > 0 {
			out[i].Value = median(v)
		}
		if p := p99s[k]; len(p) > 0 {
			m := median(p)
			out[i].P99 = &m
		}
	}
	return out
}

// roundRatios is, for collapsed row r (p99 or not), each round's gpuactor figure over the mean
// of the C++ passes just before and after that round: their median and range. ok is false
// when r did not run in rounds or no round has a baseline.
func roundRatios(rep *Report, r Result, p99 bool) (med, lo, hi float64, ok bool) {
	return roundRatiosAgainst(rep, r, refOf(r.Scenario), p99)
}

// roundRatiosAgainst is roundRatios with C++ scenario ref as the baseline.
func roundRatiosAgainst(rep *Report, r Result, ref string, p99 bool) (med, lo, hi float64, ok bool) {
	return roundRatiosOver(rep, r, "cpp", ref, p99)
}

// roundRatiosOver is roundRatios with impl's scenario ref, run in numbered passes as the C++
// baseline is (the C++ baseline itself, or a Python peer), as the baseline.
func roundRatiosOver(rep *Report, r Result, impl, ref string, p99 bool) (med, lo, hi float64, ok bool) {
	if r.rounds == 0 {
		return 0, 0, 0, false
	}
	var ratios []float64
	for _, g := range rep.Results {
		if g.Impl != "gpuactor" || g.Round == 0 || g.Backend != r.Backend || g.Scenario != r.Scenario || g.Size != r.Size || !g.Checked {
			continue
		}
		v := pick(&g, p99)
		if v == nil {
			continue
		}
		passes := &Report{Results: slices.DeleteFunc(slices.Clone(rep.Results), func(c Result) bool {
			return c.Impl == impl && c.Pass != g.Round && c.Pass != g.Round+1
		})}
		if base, _ := lookupRow(passes, impl, ref, g, p99); base != nil && *base > 0 {
			ratios = append(ratios, *v / *base)
		}
	}
	if len(ratios) == 0 {
		return 0, 0, 0, false
	}
	return median(ratios), slices.Min(ratios), slices.Max(ratios), true
}

// rangeLabel shows a range of ratios.
func rangeLabel(lo, hi float64) string { return fmt.Sprintf("%.2f–%.2f×", lo, hi) }

// roundPairs pairs each checked result of gpuactor's row on backend at size with the checked
// result of its row over of the same round: row ÷ over and row − over, for the p50 or p99.
func roundPairs(rep *Report, backend, row, over string, size int64, p99 bool) (ratios, diffs []float64) {
	for _, g := range rep.Results {
		if g.Impl != "gpuactor" || g.Backend != backend || g.Scenario != row || g.Size != size || !g.Checked {
			continue
		}
		i := slices.IndexFunc(rep.Results, func(o Result) bool {
			return o.Impl == "gpuactor" && o.Backend == backend && o.Scenario == over && o.Size == size && o.Round == g.Round && o.Checked
		})
		if i < 0 {
			continue
		}
		v, u := pick(&g, p99), pick(&rep.Results[i], p99)
		if v == nil || u == nil || *u <= 0 {
			continue
		}
		ratios, diffs = append(ratios, *v / *u), append(diffs, *v-*u)
	}
	return ratios, diffs
}
