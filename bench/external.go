package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// runExternal runs the C++ baseline and the Python peers for the same scenarios and sizes and
// adds their results. Their failures are reported, never fatal: the gpuactor rows still stand.
// pass 1 runs before gpuactor's scenarios, pass r+1 after round r of them. The peers run in
// every pass, just after the C++ baseline, so that each of their figures has a C++ figure of
// the same minutes to be divided by (peerRatios), as gpuactor's rounds have.
func runExternal(ctx context.Context, o *options, rep *Report, pass int) {
	args := externalArgs(o)
	if bin, err := cbaseline(ctx, o, rep.Meta.CC); err != nil {
		rep.Errors = append(rep.Errors, "C++ baseline: "+err.Error())
		fmt.Fprintln(os.Stderr, "C++ baseline:", err)
	} else if bin != "" {
		fmt.Fprintf(os.Stderr, "running the C++ baseline (pass %d): %s\n", pass, bin)
		collect(ctx, rep, "cpp", pass, exec.CommandContext(ctx, bin, args...))
	}
	if !o.peers {
		return
	}
	script := o.peersScript
	if script == "" {
		var ok bool
		if script, ok = peersScript(); !ok {
			return
		}
	}
	fmt.Fprintf(os.Stderr, "running the Python peers (pass %d): %s\n", pass, script)
	collect(ctx, rep, "peers", pass, exec.CommandContext(ctx, "python3", append([]string{script}, args...)...))
}

// externalArgs are the flags the C++ baseline and the peers both take: every C++ row the
// planned gpuactor rows are shown against, the sizes, repeats, device and graph sizes.
func externalArgs(o *options) []string {
	var names []string
	for _, t := range plan(o) {
		for _, n := range t.s.cppRows() {
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	args := []string{"--scenarios", strings.Join(names, ","), "--sizes", joinSizes(o.sizes),
		"--repeat", strconv.Itoa(o.repeat), "--device", strconv.Itoa(o.device)}
	if o.graphSizes != nil {
		args = append(args, "--graph-sizes", joinSizes(o.graphSizes))
	}
	return args
}

// cbaseline returns the C++ baseline binary: -cbaseline, else bench/cbaseline/suite.cu built
// with nvcc for the device's architecture. "" with no error means there is none to run.
func cbaseline(ctx context.Context, o *options, cc string) (string, error) {
	switch o.cbaseline {
	case "off":
		return "", nil
	case "":
	default:
		return o.cbaseline, nil
	}
	if o.built != "" {
		return o.built, nil
	}
	out := filepath.Join(os.TempDir(), "gpuactor-cbaseline")
	ok, err := buildSuite(ctx, cc, out)
	if err != nil {
		return "", err
	}
	if !ok {
		fmt.Fprintln(os.Stderr, "no nvcc: the C++ baseline column stays empty (pass -cbaseline PATH to use a prebuilt one)")
		return "", nil
	}
	o.built = out
	return out, nil
}

// buildSuite builds bench/cbaseline/suite.cu with nvcc for compute capability cc into out,
// with extra nvcc flags. ok is false, with no error, when there is no nvcc.
func buildSuite(ctx context.Context, cc, out string, extra ...string) (ok bool, err error) {
	nvcc, err := exec.LookPath("nvcc")
	if err != nil {
		if _, statErr := os.Stat("/usr/local/cuda/bin/nvcc"); statErr != nil {
			return false, nil
		}
		nvcc = "/usr/local/cuda/bin/nvcc"
	}
	src := filepath.Join(repoRoot(), "bench", "cbaseline", "suite.cu")
	if _, err := os.Stat(src); err != nil {
		return false, fmt.Errorf("the C++ baseline source is not found: %w", err)
	}
	arch := "sm_" + strings.ReplaceAll(cc, ".", "")
	args := append([]string{"-O2", "-std=c++17", "-arch=" + arch}, extra...)
	cmd := exec.CommandContext(ctx, nvcc, append(args, "-o", out, src)...)
	if msg, err := cmd.CombinedOutput(); err != nil {
		return false, fmt.Errorf("nvcc: %v\n%s", err, msg)
	}
	return true, nil
}

// peersScript finds bench/peers/peers.py when python3 is there.
func peersScript() (string, bool) {
	if _, err := exec.LookPath("python3"); err != nil {
		return "", false
	}
	script := filepath.Join(repoRoot(), "bench", "peers", "peers.py")
	_, err := os.Stat(script)
	return script, err == nil
}

// repoRoot is the module root: the working directory or one of its parents holding go.mod and
// bench/ (go run ./bench and the packed binary both run from there).
func repoRoot() string {
	dir, _ := os.Getwd()
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "bench", "cbaseline")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return dir
		}
	}
}

// collect runs cmd and parses its JSON lines into rep.
func collect(ctx context.Context, rep *Report, what string, pass int, cmd *exec.Cmd) {
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	collectLines(rep, what, pass, out)
	if err != nil && ctx.Err() == nil {
		msg := fmt.Sprintf("%s exited: %v: %s", what, err, lastLines(stderr.String(), 5))
		if what == "cpp" {
			rep.Errors = append(rep.Errors, msg)
		}
		fmt.Fprintln(os.Stderr, msg)
	}
}

// collectLines parses the JSON lines of what (cpp or the peers), from pass, into rep.
func collectLines(rep *Report, what string, pass int, out []byte) {
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var m struct {
			Kind    string `json:"kind"`
			Impl    string `json:"impl"`
			Message string `json:"message"`
			Result
		}
		if json.Unmarshal([]byte(line), &m) != nil {
			continue
		}
		switch m.Kind {
		case "result":
			m.Result.Impl, m.Result.Pass = m.Impl, pass
			rep.Results = append(rep.Results, m.Result)
			if !m.Checked {
				rep.Errors = append(rep.Errors, fmt.Sprintf("%s %s %s: result check failed", m.Impl, m.Scenario, sizeLabel(m.Size)))
			}
		case "error":
			msg := fmt.Sprintf("%s: %s", m.Impl, m.Message)
			if what == "cpp" {
				rep.Errors = append(rep.Errors, msg)
			}
			fmt.Fprintln(os.Stderr, "  "+msg)
		}
	}
}

func joinSizes(sizes []int64) string {
	s := make([]string, len(sizes))
	for i, v := range sizes {
		s[i] = strconv.FormatInt(v, 10)
	}
	return strings.Join(s, ",")
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
