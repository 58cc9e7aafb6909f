package main

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// outcome is what one run of one program gave.
type outcome struct {
	status  string             // PASS (exit 0), WAIVED (exit 2), FAIL (another exit status), or ERROR: why it did not run
	results []string           // its result lines, in order (sorted for a port with sortResults)
	timings map[string]float64 // each timing it printed, by name
}

// Exit statuses the samples use (helper_cuda.h's EXIT_WAIVED is 2).
const exitWaived = 2

// status names an exit status as the samples mean it.
func status(code int) string {
	switch code {
	case 0:
		return "PASS"
	case exitWaived:
		return "WAIVED"
	default:
		return "FAIL"
	}
}

// parse reads one program's output: the lines p's results match, the first value of each of
// p's timings (the first after the line p.after names for it, if any), and every cell of each
// of p's matrices (matrix.cellName). A timing the output lacks is absent from the map; so is
// one whose number does not parse.
func parse(p port, output string) (results []string, timings map[string]float64) {
	timings = map[string]float64{}
	reached := map[string]bool{} // timings whose after line has been seen
	cells := make([]matrixReader, len(p.matrices))
	for line := range strings.Lines(output) {
		line = strings.TrimRight(line, "\r\n")
		for i := range cells {
			cells[i].read(p.matrices[i], line, timings)
		}
		for name, a := range p.after {
			if !reached[name] && a.MatchString(line) {
				reached[name] = true
			}
		}
		for _, r := range p.results {
			if r.MatchString(line) {
				results = append(results, line)
				break
			}
		}
		for _, t := range p.timings {
			if _, seen := timings[t.name]; seen {
				continue
			}
			if p.after[t.name] != nil && !reached[t.name] {
				continue
			}
			if m := t.re.FindStringSubmatch(line); m != nil {
				if v, err := strconv.ParseFloat(m[1], 64); err == nil {
					timings[t.name] = v
				}
			}
		}
	}
	if p.sortResults {
		slices.Sort(results)
	}
	return results, timings
}

// maxMatrix bounds a matrix's rows and columns: more GPUs than one host holds, so that a stray
// line read as a row cannot make the report's matrices huge.
const maxMatrix = 64

// matrixReader follows one matrix through an output, a line at a time.
type matrixReader struct{ state matrixState }

type matrixState int

const (
	beforeTitle  matrixState = iota
	beforeHeader             // the title seen
	inRows                   // the header seen: each row line is a row of cells
	matrixDone               // the first other line after the header ended it
)

var (
	matrixHeader = regexp.MustCompile(`^ +(D\\D|GPU) `)
	matrixRow    = regexp.MustCompile(`^ +([0-9]+) +([-+0-9.eEinfa ]+?) *$`)
)

// read takes the next line: after m's title and its header, each row line's values become
// cells (row number, column index) in timings; the first other line ends the matrix.
func (r *matrixReader) read(m matrix, line string, timings map[string]float64) {
	switch r.state {
	case beforeTitle:
		if m.title.MatchString(line) {
			r.state = beforeHeader
		}
	case beforeHeader:
		if matrixHeader.MatchString(line) {
			r.state = inRows
		}
	case inRows:
		row := matrixRow.FindStringSubmatch(line)
		if row == nil {
			r.state = matrixDone
			return
		}
		i, err := strconv.Atoi(row[1])
		if err != nil || i >= maxMatrix {
			return
		}
		for j, f := range strings.Fields(row[2]) {
			if j >= maxMatrix {
				break
			}
			if v, err := strconv.ParseFloat(f, 64); err == nil {
				timings[m.cellName(i, j)] = v
			}
		}
	}
}
