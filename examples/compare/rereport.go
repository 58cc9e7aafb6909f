package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// rereport rebuilds the results of the chosen ports from a folder a run kept (-keep): each
// port's runs.tsv and the outputs it names, parsed again with what ports.go knows now, or why
// the run skipped it. A port the run did not reach is left out; the machine is the one the run
// described, if it saved it.
func rereport(keep string, chosen []port) (results []portResult, machine string, runs int, err error) {
	if b, err := os.ReadFile(filepath.Join(keep, machineFile)); err == nil {
		machine = string(b)
	}
	for _, p := range chosen {
		dir := filepath.Join(keep, p.name)
		if why, err := os.ReadFile(filepath.Join(dir, skipFile)); err == nil {
			results = append(results, portResult{port: p, skip: string(why)})
			continue
		}
		f, err := os.Open(filepath.Join(dir, "runs.tsv"))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return nil, "", 0, err
		}
		res, n, err := readRuns(p, dir, f)
		f.Close()
		if err != nil {
			return nil, "", 0, fmt.Errorf("%s: %w", filepath.Join(dir, "runs.tsv"), err)
		}
		results, runs = append(results, res), max(runs, n)
	}
	if len(results) == 0 {
		return nil, "", 0, fmt.Errorf("-report %s: no runs of the chosen ports there", keep)
	}
	return results, machine, runs, nil
}

// skipFile is where a kept run saves why it skipped a port.
const skipFile = "skipped.txt"

// keepSkip saves why r's port was skipped in its folder under keep.
func keepSkip(keep string, r portResult) error {
	dir := filepath.Join(keep, r.port.name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, skipFile), []byte(r.skip), 0o644)
}

// readRuns reads one port's runs.tsv (variant, program, run, status, seconds, output) and the
// outputs it names, in dir; n is the most runs of a program in a variant.
func readRuns(p port, dir string, f *os.File) (res portResult, n int, err error) {
	res.port = p
	byLabel := map[string]*variantResult{}
	var order []string
	sc := bufio.NewScanner(f)
	for line := 0; sc.Scan(); line++ {
		if line == 0 {
			continue // the header
		}
		fields := strings.Split(sc.Text(), "\t")
		if len(fields) != 6 {
			return res, 0, fmt.Errorf("line %d: %d fields, want 6", line+1, len(fields))
		}
		label, program, status, file := fields[0], fields[1], fields[3], fields[5]
		run, err := strconv.Atoi(fields[2])
		if err != nil {
			return res, 0, fmt.Errorf("line %d: run %q: %w", line+1, fields[2], err)
		}
		vr := byLabel[label]
		if vr == nil {
			v, ok := variantOf(p, label)
			if !ok {
				return res, 0, fmt.Errorf("line %d: %s has no variant %q", line+1, p.name, label)
			}
			vr = &variantResult{variant: v}
			byLabel[label] = vr
			order = append(order, label)
		}
		out, err := os.ReadFile(filepath.Join(dir, filepath.Base(file)))
		if err != nil {
			return res, 0, err
		}
		o := outcome{status: status}
		o.results, o.timings = parse(p, string(out))
		switch program {
		case "c":
			vr.c = append(vr.c, o)
		case "go":
			vr.g = append(vr.g, o)
		default:
			return res, 0, fmt.Errorf("line %d: program %q, want c or go", line+1, program)
		}
		n = max(n, run)
	}
	if err := sc.Err(); err != nil {
		return res, 0, err
	}
	for _, l := range order {
		res.variants = append(res.variants, *byLabel[l])
	}
	return res, n, nil
}

// variantOf is p's variant with the given label.
func variantOf(p port, label string) (variant, bool) {
	for _, v := range p.variants {
		if v.label == label {
			return v, true
		}
	}
	return variant{}, false
}
