package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
)

// report writes the markdown table of results: one row per variant of each port, and one more
// per timing after the first, then the result lines that differ, if any.
func report(w io.Writer, runs int, machine string, results []portResult) {
	fmt.Fprintf(w, "# gpuactor's ports and NVIDIA's samples, %d run(s) of each, alternating\n\n", runs)
	if machine != "" {
		fmt.Fprintf(w, "```\n%s\n```\n\n", strings.TrimSpace(machine))
	}
	fmt.Fprintln(w, "| sample | result C | result Go | same | timing | C median (min–max) | Go median (min–max) | Go/C |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	var diffs []string
	for _, r := range results {
		if r.skip != "" {
			fmt.Fprintf(w, "| %s | — | — | — | skipped: %s | | | |\n", r.port.name, cell(r.skip))
			continue
		}
		for _, v := range r.variants {
			name := r.port.name + labelled(v.variant.label)
			same, diff := compareResults(v.c, v.g)
			if diff != "" {
				diffs = append(diffs, fmt.Sprintf("### %s\n\n%s", name, diff))
			}
			lead := fmt.Sprintf("| %s | %s | %s | %s |", name, statuses(v.c), statuses(v.g), yesNo(same))
			if len(r.port.timings) == 0 {
				fmt.Fprintf(w, "%s — | | | |\n", lead)
			}
			for i, t := range r.port.timings {
				if i > 0 {
					lead = "| | | | |"
				}
				c, g := summarize(values(v.c, t.name)), summarize(values(v.g, t.name))
				fmt.Fprintf(w, "%s %s (%s) | %s | %s | %s |\n", lead, t.name, t.unit, spreadCell(c), spreadCell(g), ratio(g, c, t.unit))
			}
		}
	}
	reportMatrices(w, results)
	if len(diffs) > 0 {
		fmt.Fprintf(w, "\n## Result lines that differ\n\n%s", strings.Join(diffs, "\n"))
	}
}

// compareResults says whether every run of both programs ended alike and printed the same
// result lines, and otherwise describes the first difference.
func compareResults(c, g []outcome) (bool, string) {
	if len(c) == 0 || len(g) == 0 {
		return false, "no runs"
	}
	ref := c[0]
	for _, side := range []struct {
		name string
		runs []outcome
	}{{"C", c}, {"Go", g}} {
		for i, o := range side.runs {
			if o.status != ref.status {
				return false, fmt.Sprintf("%s run %d: %s, C run 1: %s\n", side.name, i+1, o.status, ref.status)
			}
			if !slices.Equal(o.results, ref.results) {
				return false, fmt.Sprintf("%s run %d against C run 1:\n\n```diff\n%s```\n", side.name, i+1, lineDiff(ref.results, o.results))
			}
		}
	}
	return true, ""
}

// lineDiff lists the lines only in a (-) and only in b (+), each in its order.
func lineDiff(a, b []string) string {
	var sb strings.Builder
	count := func(ls []string) map[string]int {
		m := map[string]int{}
		for _, l := range ls {
			m[l]++
		}
		return m
	}
	inA, inB := count(a), count(b)
	for _, l := range a {
		if inB[l] > 0 {
			inB[l]--
			continue
		}
		fmt.Fprintf(&sb, "- %s\n", l)
	}
	for _, l := range b {
		if inA[l] > 0 {
			inA[l]--
			continue
		}
		fmt.Fprintf(&sb, "+ %s\n", l)
	}
	if sb.Len() == 0 {
		return "(the same lines in another order)\n"
	}
	return sb.String()
}

// statuses counts the runs' statuses: "PASS ×3", "PASS ×2, FAIL ×1".
func statuses(runs []outcome) string {
	var order []string
	n := map[string]int{}
	for _, o := range runs {
		if n[o.status] == 0 {
			order = append(order, o.status)
		}
		n[o.status]++
	}
	parts := make([]string, len(order))
	for i, s := range order {
		parts[i] = fmt.Sprintf("%s ×%d", cell(s), n[s])
	}
	if len(parts) == 0 {
		return "—"
	}
	return strings.Join(parts, ", ")
}

// values are the runs' values of one timing, from the runs that printed it.
func values(runs []outcome, name string) []float64 {
	var vs []float64
	for _, o := range runs {
		if v, ok := o.timings[name]; ok {
			vs = append(vs, v)
		}
	}
	return vs
}

func spreadCell(s spread) string {
	if s.n == 0 {
		return "—"
	}
	return fmt.Sprintf("%s (%s–%s)", num(s.median), num(s.min), num(s.max))
}

// ratio is Go's median over C's; for a rate (GB/s) it says that higher is better.
func ratio(g, c spread, unit string) string {
	if g.n == 0 || c.n == 0 || c.median == 0 {
		return "—"
	}
	s := fmt.Sprintf("%.2f", g.median/c.median)
	if higherIsBetter(unit) {
		s += " (higher is better)"
	}
	return s
}

// higherIsBetter reports whether a timing of unit is a rate, better when higher; the others
// (times, counts) are better when lower.
func higherIsBetter(unit string) bool { return unit == "GB/s" }

// num prints a value with about four significant digits, without exponents.
func num(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1000:
		return fmt.Sprintf("%.0f", v)
	case a >= 100:
		return fmt.Sprintf("%.1f", v)
	case a >= 1:
		return fmt.Sprintf("%.2f", v)
	default:
		return fmt.Sprintf("%.4f", v)
	}
}

// cell makes s safe inside a markdown table cell.
func cell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
