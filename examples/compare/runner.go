package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// harness builds the C samples and runs them and the ports.
type harness struct {
	samples string        // the cuda-samples checkout
	bin     string        // the folder of the ports' binaries
	keep    string        // where builds and raw outputs go
	nvcc    string        // the compiler to run
	runs    int           // runs of each program per variant
	timeout time.Duration // the most one run, or the build, may take
	log     io.Writer     // progress
}

// portResult is what the harness found for one port: why it skipped it, or each variant's runs.
type portResult struct {
	port     port
	skip     string
	variants []variantResult
}

// variantResult is every run of both programs in one variant.
type variantResult struct {
	variant variant
	c, g    []outcome
}

// runPort builds p's C sample and runs it and the port h.runs times each, alternating. A
// missing binary or sample file, or a failed build, skips the port with the reason.
func (h *harness) runPort(ctx context.Context, p port) portResult {
	res := portResult{port: p}
	goBin, err := filepath.Abs(filepath.Join(h.bin, p.name))
	if err != nil {
		res.skip = err.Error()
		return res
	}
	if fi, err := os.Stat(goBin); err != nil || !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
		res.skip = "no port binary " + filepath.Join(h.bin, p.name)
		return res
	}
	sampleDir := filepath.Join(h.samples, "Samples", filepath.FromSlash(p.sample))
	for _, s := range p.sources {
		if _, err := os.Stat(filepath.Join(sampleDir, filepath.FromSlash(s))); err != nil {
			res.skip = "no sample file " + filepath.Join("Samples", filepath.FromSlash(p.sample), filepath.FromSlash(s))
			return res
		}
	}
	dir := filepath.Join(h.keep, p.name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		res.skip = err.Error()
		return res
	}
	cBin, err := h.build(ctx, p, sampleDir, dir)
	if err != nil {
		res.skip = err.Error()
		return res
	}
	runLog, err := os.Create(filepath.Join(dir, "runs.tsv"))
	if err != nil {
		res.skip = err.Error()
		return res
	}
	defer runLog.Close()
	fmt.Fprintln(runLog, "variant\tprogram\trun\tstatus\tseconds\toutput")
	for _, v := range p.variants {
		vr := variantResult{variant: v}
		for i := 1; i <= h.runs; i++ {
			for _, side := range []struct {
				name string
				argv []string
				dst  *[]outcome
			}{
				{"c", append([]string{cBin}, v.cArgs...), &vr.c},
				{"go", append([]string{goBin, "-backend", "cuda"}, v.goArgs...), &vr.g},
			} {
				file := filepath.Join(dir, fmt.Sprintf("%s%s-%d.txt", side.name, suffix(v.label), i))
				fmt.Fprintf(h.log, "%s%s: %s run %d of %d\n", p.name, labelled(v.label), side.name, i, h.runs)
				start := time.Now()
				o := h.runOne(ctx, p, dir, file, v.env, side.argv)
				fmt.Fprintf(runLog, "%s\t%s\t%d\t%s\t%.3f\t%s\n", v.label, side.name, i, o.status, time.Since(start).Seconds(), filepath.Base(file))
				*side.dst = append(*side.dst, o)
			}
		}
		res.variants = append(res.variants, vr)
	}
	return res
}

// build compiles p's C sample into dir with nvcc, logging the command and its output to
// dir/build.log, and returns the program's path.
func (h *harness) build(ctx context.Context, p port, sampleDir, dir string) (string, error) {
	exe, err := filepath.Abs(filepath.Join(dir, p.exe))
	if err != nil {
		return "", err
	}
	args := append([]string{}, p.flags...)
	args = append(args, "-I"+sampleDir, "-I"+filepath.Join(h.samples, "Common"), "-o", exe)
	for _, s := range p.sources {
		args = append(args, filepath.Join(sampleDir, filepath.FromSlash(s)))
	}
	args = append(args, p.libs...)
	fmt.Fprintf(h.log, "%s: building %s\n", p.name, p.exe)
	ctx, cancel := context.WithTimeout(ctx, h.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, h.nvcc, args...)
	out, err := cmd.CombinedOutput()
	logText := fmt.Sprintf("%s %s\n%s", h.nvcc, strings.Join(args, " "), out)
	logFile := filepath.Join(dir, "build.log")
	if werr := os.WriteFile(logFile, []byte(logText), 0o644); werr != nil && err == nil {
		err = werr
	}
	if err != nil {
		return "", fmt.Errorf("building %s failed (%v): see %s", p.exe, err, logFile)
	}
	return exe, nil
}

// runOne runs argv in dir with env added, writes its output (stdout and stderr together) to
// file, and parses it for p's results and timings.
func (h *harness) runOne(ctx context.Context, p port, dir, file string, env, argv []string) outcome {
	ctx, cancel := context.WithTimeout(ctx, h.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	killGroup(cmd)
	// A child that keeps the output open (simpleIPC's processes) must not hold the run past
	// the timeout.
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	o := outcome{}
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		o.status = fmt.Sprintf("ERROR: timed out after %v", h.timeout)
	case errors.As(err, &exit):
		o.status = status(exit.ExitCode())
	case err != nil:
		o.status = "ERROR: " + err.Error()
	default:
		o.status = status(0)
	}
	o.results, o.timings = parse(p, out.String())
	if werr := os.WriteFile(file, out.Bytes(), 0o644); werr != nil {
		fmt.Fprintf(h.log, "keeping %s: %v\n", file, werr)
	}
	return o
}

// suffix is a variant's label as part of a file name: "" for the default variant.
func suffix(label string) string {
	if label == "" {
		return ""
	}
	return "-" + strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' {
			return r
		}
		return '_'
	}, label)
}

// labelled is a variant's label for people: "" or " (label)".
func labelled(label string) string {
	if label == "" {
		return ""
	}
	return " (" + label + ")"
}
