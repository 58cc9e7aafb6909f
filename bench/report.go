package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"text/tabwriter"
)

// printTables writes one table per backend: gpuactor's figure and, on the GPU, the C++
// baseline's, their ratio (gpuactor ÷ C++), and the peers' figures where they ran. Rows run
// in rounds (-rounds) show the median over rounds, and the median and range of the rounds'
// ratios.
func printTables(w io.Writer, rep *Report) {
	rows := collapseRounds(rep.Results)
	inRounds := slices.ContainsFunc(rows, func(r Result) bool { return r.rounds > 1 })
	for _, b := range rep.Meta.Backends {
		fmt.Fprintf(w, "\n== gpuactor on %s", b)
		if b == "cuda" {
			fmt.Fprintf(w, ": %s (compute %s), driver %s, runtime %s — ratio = gpuactor ÷ C++ (times: lower is better; GB/s: higher is better); C++ is the mean of a run before and one after gpuactor's, and C++ drift is how far those two differ", rep.Meta.GPU, rep.Meta.CC, rep.Meta.Driver, rep.Meta.Runtime)
			if rep.Meta.InProcess {
				fmt.Fprint(w, "; the C++ baseline ran in this process, a pass of each C++ row just before and after each run of its gpuactor rows")
				switch rep.Meta.CppThread {
				case "actor":
					fmt.Fprint(w, ", on the device actor's thread")
				case "own":
					fmt.Fprint(w, ", on a thread of the bench's")
				}
			}
			if inRounds {
				fmt.Fprint(w, "; in rounds: gpuactor and C++ are medians and means over the rounds and passes, ratio the median of each round's ratio to the C++ passes around it, and ratio range their spread")
			}
			fmt.Fprint(w, "; cupy and cuda.core are the Python peers' medians over the passes they ran in, each pass just after a C++ pass, and ÷ C++ the median (range) of each pass's figure over that C++ pass's")
		}
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		switch {
		case b == "cuda" && inRounds:
			fmt.Fprintln(tw, "scenario\tsize\tunit\tC++\tC++ drift\tgpuactor\tratio\tratio range\tcupy\tcupy ÷ C++\tcuda.core\tcuda.core ÷ C++\t")
		case b == "cuda":
			fmt.Fprintln(tw, "scenario\tsize\tunit\tC++\tC++ drift\tgpuactor\tratio\tcupy\tcupy ÷ C++\tcuda.core\tcuda.core ÷ C++\t")
		default:
			fmt.Fprintln(tw, "scenario\tsize\tunit\tgpuactor\t")
		}
		for _, r := range rows {
			if r.Impl != "gpuactor" || r.Backend != b {
				continue
			}
			for _, row := range expand(r) {
				if b != "cuda" {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t\n", row.label, sizeLabel(r.Size), r.Unit, num(row.value, r.Checked))
					continue
				}
				cpp, drift := lookupSpread(rep, "cpp", r, row.p99)
				rat, spread := ratio(row.value, cpp), "-"
				if med, lo, hi, ok := roundRatios(rep, r, row.p99); ok {
					rat, spread = fmt.Sprintf("%.2f×", med), rangeLabel(lo, hi)
				}
				if inRounds {
					rat += "\t" + spread
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t", row.label, sizeLabel(r.Size), r.Unit,
					numPtr(cpp), driftLabel(cpp, drift), num(row.value, r.Checked), rat)
				for _, impl := range peerImpls {
					figure, peerRatio := peerCells(rep, impl, r, row.p99)
					fmt.Fprintf(tw, "%s\t%s\t", figure, peerRatio)
				}
				fmt.Fprintln(tw)
			}
		}
		tw.Flush()
	}
	printByHand(w, rep)
	printBreakdown(w, rep)
	printDifferences(w, rep)
	printAgainstPeers(w, rep)
	printProbes(w, rep)
	printIsolated(w, rep)
	printScaling(w, rep)
	for _, n := range rep.Skipped {
		fmt.Fprintln(w, "SKIPPED:", n)
	}
	for _, e := range rep.Errors {
		fmt.Fprintln(w, "ERROR:", e)
	}
}

type row struct {
	label string
	value float64
	p99   bool
}

// expand turns a result with a p99 into two rows.
func expand(r Result) []row {
	if r.P99 == nil {
		return []row{{r.Scenario, r.Value, false}}
	}
	return []row{{r.Scenario + " p50", r.Value, false}, {r.Scenario + " p99", *r.P99, true}}
}

// lookup finds impl's figure for the scenario gpuactor's result r is compared with: the mean
// over impl's passes (the C++ baseline runs before and after gpuactor), and the spread between
// them (largest ÷ smallest − 1), the run's drift.
func lookup(rep *Report, impl string, r Result, p99 bool) *float64 {
	v, _ := lookupSpread(rep, impl, r, p99)
	return v
}

func lookupSpread(rep *Report, impl string, r Result, p99 bool) (*float64, float64) {
	return lookupRow(rep, impl, refOf(r.Scenario), r, p99)
}

// refOf is the C++ scenario gpuactor's scenario name is compared with.
func refOf(name string) string {
	name = baseScenario(name) // a tuning variant's row is compared with the same C++ row
	for _, s := range scenarios() {
		if s.name == name {
			return s.refName()
		}
	}
	return name
}

// lookupRow is lookupSpread against impl's scenario ref, whatever r's own reference is.
func lookupRow(rep *Report, impl, ref string, r Result, p99 bool) (*float64, float64) {
	var same, loose []float64
	for i := range rep.Results {
		c := &rep.Results[i]
		if c.Impl != impl || c.Scenario != ref || !c.Checked {
			continue
		}
		v := pick(c, p99)
		if v == nil {
			continue
		}
		switch {
		case c.Size == r.Size:
			same = append(same, *v)
		case c.Size == 0 || r.Size == 0:
			loose = append(loose, *v)
		}
	}
	if len(same) == 0 {
		same = loose
	}
	if len(same) == 0 {
		return nil, 0
	}
	sum, lo, hi := 0.0, same[0], same[0]
	for _, v := range same {
		sum += v
		lo, hi = min(lo, v), max(hi, v)
	}
	mean := sum / float64(len(same))
	spread := 0.0
	if lo > 0 {
		spread = hi/lo - 1
	}
	return &mean, spread
}

func pick(r *Result, p99 bool) *float64 {
	if p99 {
		return r.P99
	}
	v := r.Value
	return &v
}

func num(v float64, ok bool) string {
	if !ok {
		return "FAILED"
	}
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

func numPtr(v *float64) string {
	if v == nil {
		return "-"
	}
	return num(*v, true)
}

func driftLabel(ref *float64, spread float64) string {
	if ref == nil {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", spread*100)
}

func ratio(v float64, ref *float64) string {
	if ref == nil || *ref == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f×", v / *ref)
}

func sizeLabel(n int64) string {
	switch {
	case n == 0:
		return ""
	case n%(1<<30) == 0:
		return fmt.Sprintf("%dG", n>>30)
	case n%(1<<20) == 0:
		return fmt.Sprintf("%dM", n>>20)
	case n%(1<<10) == 0:
		return fmt.Sprintf("%dK", n>>10)
	}
	return fmt.Sprintf("%dB", n)
}

func writeJSON(path string, rep *Report) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// save writes results.json, the plots and the printed table under the results directory.
func save(o *options, rep *Report) (string, error) {
	dir := o.outDir
	if dir == "" {
		name := rep.Meta.GPU
		if name == "" {
			name = "sim"
		}
		slug := strings.Trim(regexp.MustCompile(`[^a-z0-9]+`).ReplaceAllString(strings.ToLower(name), "-"), "-")
		dir = filepath.Join(repoRoot(), "bench", "results", slug) // one folder per GPU: the latest run
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if err := writeJSON(filepath.Join(dir, "results.json"), rep); err != nil {
		return "", err
	}
	f, err := os.Create(filepath.Join(dir, "table.txt"))
	if err != nil {
		return "", err
	}
	printTables(f, rep)
	if err := f.Close(); err != nil {
		return "", err
	}
	return dir, plots(dir, rep)
}
