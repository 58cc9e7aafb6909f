// Command compare builds NVIDIA's CUDA samples and runs them beside gpuactor's ports of them
// on the same GPUs, then prints a markdown table: each sample's result (exit status and the
// result lines both print) from C and Go and whether they are the same, and each timing both
// print, as the median and spread over the runs of each, with Go's median over C's.
//
//	compare -samples DIR -bin DIR [-runs 3] [-only name,...] [-out table.md] [-keep DIR]
//	compare -report DIR [-only name,...] [-out table.md]
//
// The second form runs nothing: it writes the table again from the outputs a run kept in DIR.
// -samples is a cuda-samples checkout (Samples/<category>/<Name>/, Common/); -bin holds the
// ports' binaries, named as the ports' folders under examples/. It needs nvcc (-nvcc) and the
// GPUs, not Go. What it knows of each port is the table in ports.go; see README.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"time"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "compare:", err)
		os.Exit(2)
	}
}

// run parses the command line, runs the chosen ports and writes the table to stdout (and to
// -out). Ports that fail or are skipped are in the table, not errors.
func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	samples := fs.String("samples", "", "the cuda-samples checkout (required)")
	bin := fs.String("bin", "", "the folder of the ports' binaries (required)")
	runs := fs.Int("runs", 3, "runs of each program per variant")
	only := fs.String("only", "", "comma-separated ports to run (default: all)")
	out := fs.String("out", "", "also write the table to this file")
	keep := fs.String("keep", "", "keep the builds and every run's output in this folder (default: a temporary one, removed)")
	nvcc := fs.String("nvcc", "nvcc", "the CUDA compiler")
	timeout := fs.Duration("timeout", 10*time.Minute, "the most one build or run may take")
	again := fs.String("report", "", "run nothing: write the table from the runs kept in this folder (-keep of an earlier run)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *again != "" {
		if *samples != "" || *bin != "" || *keep != "" || fs.NArg() > 0 {
			fs.Usage()
			return errors.New("-report takes only -only and -out")
		}
		chosen, err := choose(*only)
		if err != nil {
			return err
		}
		results, mach, n, err := rereport(*again, chosen)
		if err != nil {
			return err
		}
		return writeTable(stdout, *out, "", n, mach, results)
	}
	if *samples == "" || *bin == "" || fs.NArg() > 0 {
		fs.Usage()
		return errors.New("-samples and -bin are required, and nothing else")
	}
	if *runs < 1 {
		return fmt.Errorf("-runs %d: want at least 1", *runs)
	}
	if fi, err := os.Stat(*samples); err != nil || !fi.IsDir() {
		return fmt.Errorf("-samples %s: not a folder", *samples)
	}
	chosen, err := choose(*only)
	if err != nil {
		return err
	}
	h := &harness{samples: *samples, bin: *bin, keep: *keep, nvcc: *nvcc, runs: *runs, timeout: *timeout, log: stderr}
	if h.keep == "" {
		if h.keep, err = os.MkdirTemp("", "compare-"); err != nil {
			return err
		}
		defer os.RemoveAll(h.keep)
	} else if err := os.MkdirAll(h.keep, 0o755); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	mach := machine(ctx, *nvcc)
	if err := os.WriteFile(filepath.Join(h.keep, machineFile), []byte(mach), 0o644); err != nil {
		return err
	}
	var results []portResult
	for _, p := range chosen {
		r := h.runPort(ctx, p)
		if r.skip != "" { // kept, so that -report lists the port as the run did
			if err := keepSkip(h.keep, r); err != nil {
				return err
			}
		}
		results = append(results, r)
	}
	keepTable := ""
	if *keep != "" {
		keepTable = filepath.Join(*keep, "table.md")
	}
	return writeTable(stdout, *out, keepTable, *runs, mach, results)
}

// machineFile is where a kept run saves the machine's description, for -report.
const machineFile = "machine.txt"

// writeTable writes the table to stdout and to each of the files named ("" for none).
func writeTable(stdout io.Writer, out, keepTable string, runs int, machine string, results []portResult) error {
	var table strings.Builder
	report(&table, runs, machine, results)
	if _, err := io.WriteString(stdout, table.String()); err != nil {
		return err
	}
	for _, f := range []string{out, keepTable} {
		if f == "" {
			continue
		}
		if err := os.WriteFile(f, []byte(table.String()), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// choose is the ports -only names, in the table's order; all of them for "".
func choose(only string) ([]port, error) {
	if only == "" {
		return ports, nil
	}
	want := map[string]bool{}
	for _, n := range strings.Split(only, ",") {
		if n = strings.TrimSpace(n); n != "" {
			want[n] = true
		}
	}
	var chosen []port
	for _, p := range ports {
		if want[p.name] {
			chosen = append(chosen, p)
			delete(want, p.name)
		}
	}
	if len(want) > 0 {
		var unknown, known []string
		for n := range want {
			unknown = append(unknown, n)
		}
		for _, p := range ports {
			known = append(known, p.name)
		}
		return nil, fmt.Errorf("-only: unknown port(s) %s (known: %s)", strings.Join(unknown, ", "), strings.Join(known, ", "))
	}
	return chosen, nil
}

// machine describes the GPUs and the compiler, as far as nvidia-smi and nvcc say.
func machine(ctx context.Context, nvcc string) string {
	var sb strings.Builder
	for _, argv := range [][]string{
		{"nvidia-smi", "--query-gpu=index,name,driver_version,pci.bus_id", "--format=csv,noheader"},
		{nvcc, "--version"},
	} {
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		out, err := exec.CommandContext(ctx, argv[0], argv[1:]...).Output()
		cancel()
		if err != nil {
			fmt.Fprintf(&sb, "%s: %v\n", argv[0], err)
			continue
		}
		sb.Write(out)
	}
	return sb.String()
}
