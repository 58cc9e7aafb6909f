package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// scalingTarget is the fan-out target: jobs per second on N GPUs at least this × N times one
// GPU's.
const scalingTarget = 0.95

// scalingPoint is one fan-out row of one backend: GPU-bound jobs per second on n devices.
type scalingPoint struct {
	n        int
	scenario string
	value    float64 // jobs/s: the median over rounds
	// overOne is the row over group_jobs_1 of the same round (the median over rounds), and
	// overCpp over the mean of the single-GPU C++ passes around it (cuda only; 0 without).
	overOne, overCpp float64
}

// scalingPoints is, for backend, every fan-out row of the jobs kind (in process, or isolated
// when prefix is isolatedPrefix) that ran and passed its checks, ordered by device count; a
// row on as many devices as another is left out, so group_jobs_all does not repeat
// group_jobs_N.
func scalingPoints(rep *Report, backend, prefix string) []scalingPoint {
	var out []scalingPoint
	for _, r := range collapseRounds(rep.Results) {
		name, ok := strings.CutPrefix(r.Scenario, prefix)
		if r.Impl != "gpuactor" || r.Backend != backend || !ok || !strings.HasPrefix(name, "group_jobs_") ||
			r.Devices == 0 || !r.Checked || slices.ContainsFunc(out, func(p scalingPoint) bool { return p.n == r.Devices }) {
			continue
		}
		p := scalingPoint{n: r.Devices, scenario: r.Scenario, value: r.Value}
		if ratios, _ := roundPairs(rep, backend, r.Scenario, prefix+"group_jobs_1", r.Size, false); len(ratios) > 0 {
			p.overOne = median(ratios)
		}
		if med, _, _, ok := roundRatios(rep, r, false); ok {
			p.overCpp = med
		} else if cpp := lookup(rep, "cpp", r, false); cpp != nil && *cpp > 0 {
			p.overCpp = r.Value / *cpp
		}
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b scalingPoint) int { return a.n - b.n })
	return out
}

// overSeveral reports whether any of pts ran on more than one device: without one there is
// no scaling to show.
func overSeveral(pts []scalingPoint) bool {
	return slices.ContainsFunc(pts, func(p scalingPoint) bool { return p.n > 1 })
}

// printScaling writes, per backend with fan-out rows over more than one device, the scaling
// table: each row's jobs per second, over one GPU through the group and over one GPU driven
// from C++, against the target; then the tail at 80% load, p99 over p50.
func printScaling(w io.Writer, rep *Report) {
	for _, b := range rep.Meta.Backends {
		for _, prefix := range []string{"", isolatedPrefix} {
			pts := scalingPoints(rep, b, prefix)
			if !overSeveral(pts) {
				continue
			}
			where := "in process"
			if prefix != "" {
				where = "isolated (every device a worker process of its own)"
			}
			fmt.Fprintf(w, "\n== fan-out scaling on %s, %s: GPU-bound jobs per second through group on N devices, over the same jobs on one device through group, and over one GPU driven from C++ in the same run (medians of each round's ratio); target ≥ %.2f × N", b, where, scalingTarget)
			if b != "cuda" {
				fmt.Fprint(w, ", judged on the GPU only")
			}
			fmt.Fprintln(w)
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
			fmt.Fprintln(tw, "N\tscenario\tjobs/s\t÷ 1 device\t÷ C++ on 1 GPU\ttarget\t")
			for _, p := range pts {
				fmt.Fprintf(tw, "%d\t%s\t%.0f\t%s\t%s\t%s\t\n", p.n, p.scenario, p.value, ratioOrDash(p.overOne), ratioOrDash(p.overCpp), scalingVerdict(p, b))
			}
			tw.Flush()
			printTail(w, rep, b, prefix)
		}
	}
}

// scalingVerdict judges a point against the target: on the GPU, by its ratio to C++ on one
// GPU (the stricter of the two when gpuactor's one GPU runs ahead of C++'s) or, where the
// C++ baseline did not run, to one device through the group.
func scalingVerdict(p scalingPoint, backend string) string {
	want := scalingTarget * float64(p.n)
	label := fmt.Sprintf("≥ %.2f×", want)
	if backend != "cuda" {
		return label
	}
	got := p.overCpp
	if got == 0 {
		got = p.overOne
	}
	if got >= want {
		return label + " met"
	}
	return label + " MISSED"
}

// printTail writes the group_tail row's p50, p99 and their ratio, when it ran on backend.
func printTail(w io.Writer, rep *Report, backend, prefix string) {
	for _, r := range collapseRounds(rep.Results) {
		if r.Impl != "gpuactor" || r.Backend != backend || r.Scenario != prefix+"group_tail" || !r.Checked || r.P99 == nil || r.Value <= 0 {
			continue
		}
		fmt.Fprintf(w, "  %s on %d devices at 80%% of their capacity: p50 %.0f µs, p99 %.0f µs, p99 ÷ p50 %.2f\n", r.Scenario, r.Devices, r.Value, *r.P99, *r.P99/r.Value)
	}
}

func ratioOrDash(r float64) string {
	if r == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f×", r)
}
