package main

import (
	"fmt"
	"io"
	"strings"
)

// pairCell is one cell of a matrix as both programs' runs gave it.
type pairCell struct {
	i, j  int
	c, g  spread
	ratio float64 // Go's median over C's; 0 when either is missing
}

// pairCells collects matrix m's cells from a variant's runs, row by row; n is the matrix's
// size, the most rows or columns any run printed.
func pairCells(m matrix, v variantResult) (cells []pairCell, n int) {
	for _, runs := range [][]outcome{v.c, v.g} {
		for _, o := range runs {
			for name := range o.timings {
				var i, j int
				if rest, ok := strings.CutPrefix(name, m.name+" "); ok {
					if _, err := fmt.Sscanf(rest, "%d-%d", &i, &j); err == nil {
						n = max(n, i+1, j+1)
					}
				}
			}
		}
	}
	for i := range n {
		for j := range n {
			pc := pairCell{i: i, j: j, c: summarize(values(v.c, m.cellName(i, j))), g: summarize(values(v.g, m.cellName(i, j)))}
			if pc.c.n > 0 && pc.g.n > 0 && pc.c.median != 0 {
				pc.ratio = pc.g.median / pc.c.median
			}
			cells = append(cells, pc)
		}
	}
	return cells, n
}

// worse says whether ratio a is worse for Go than b: lower for a rate, higher for a time.
func worse(unit string, a, b float64) bool {
	if higherIsBetter(unit) {
		return a < b
	}
	return a > b
}

// reportMatrices writes, for each variant of each port with matrices, a summary row per matrix
// (the range of Go ÷ C over every pair, the worst pair, and how far C's own runs spread in
// a cell) and then each matrix of ratios.
func reportMatrices(w io.Writer, results []portResult) {
	type table struct {
		title string
		unit  string
		cells []pairCell
		n     int
	}
	var tables []table
	for _, r := range results {
		for _, v := range r.variants {
			for _, m := range r.port.matrices {
				cells, n := pairCells(m, v)
				if n > 0 {
					tables = append(tables, table{r.port.name + labelled(v.variant.label) + ": " + m.name, m.unit, cells, n})
				}
			}
		}
	}
	if len(tables) == 0 {
		return
	}
	fmt.Fprint(w, "\n## Every pair\n\n")
	fmt.Fprint(w, "Go ÷ C of each cell's median over the runs; C's spread is the most, over the cells, of its own runs' greatest ÷ least value.\n\n")
	fmt.Fprintln(w, "| matrix | pairs | Go/C least–most | worst pair | C's spread |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	for _, t := range tables {
		var lo, hi, spreadC float64
		worst := -1
		for k, c := range t.cells {
			if c.ratio == 0 {
				continue
			}
			if worst < 0 || c.ratio < lo {
				lo = c.ratio
			}
			if worst < 0 || c.ratio > hi {
				hi = c.ratio
			}
			if worst < 0 || worse(t.unit, c.ratio, t.cells[worst].ratio) {
				worst = k
			}
			if c.c.min > 0 {
				spreadC = max(spreadC, c.c.max/c.c.min)
			}
		}
		if worst < 0 {
			fmt.Fprintf(w, "| %s (%s) | 0 | — | — | — |\n", t.title, t.unit)
			continue
		}
		wc := t.cells[worst]
		fmt.Fprintf(w, "| %s (%s) | %d | %.2f–%.2f | %d-%d: %s | %.2f |\n", t.title, t.unit, t.n*t.n, lo, hi, wc.i, wc.j, ratio(wc.g, wc.c, t.unit), spreadC)
	}
	for _, t := range tables {
		fmt.Fprintf(w, "\n### %s (%s), Go/C\n\n", t.title, t.unit)
		header := []string{"row \\ column"}
		rule := []string{"---"}
		for j := range t.n {
			header = append(header, fmt.Sprint(j))
			rule = append(rule, "---")
		}
		fmt.Fprintf(w, "| %s |\n|%s|\n", strings.Join(header, " | "), strings.Join(rule, "|"))
		for i := range t.n {
			row := []string{fmt.Sprint(i)}
			for _, c := range t.cells[i*t.n : (i+1)*t.n] {
				if c.ratio == 0 {
					row = append(row, "—")
					continue
				}
				row = append(row, fmt.Sprintf("%.2f", c.ratio))
			}
			fmt.Fprintf(w, "| %s |\n", strings.Join(row, " | "))
		}
	}
}
