package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/cudart"
)

// With -inprocess, the C++ baseline is suite.cu built as a shared library and loaded into the
// bench's own process, and each gpuactor row runs between two passes of its C++ row, moments
// apart, rather than the whole suite between two runs of the C++ program. On the H100 hosts the
// C++ figures for one-node graphs moved by up to 126% between passes a minute apart (session 9),
// which swamps a 5% target; passes milliseconds apart, in one process on one context, drift far
// less. Both sides then share the process's state too: graphs run slower per node once a
// process has had work on several streams (graphstate.cu), and here the C++ rows' stream and
// gpuactor's are in one process, so the absolute figures of both can sit above a separate
// C++ run's while their ratio stays fair.

// suitePasses runs the C++ suite with the flags given and returns its JSON lines and exit
// status: the loaded library, or a fake in tests.
type suitePasses interface {
	suite(args []string) (out []byte, status int)
}

// cppLib is suite.cu loaded into this process (built with -DSUITE_LIB).
type cppLib struct {
	run uintptr // suite_run(int argc, char** argv, int* status) -> const char*
}

// openCppLib loads the C++ baseline library at path.
func openCppLib(path string) (*cppLib, error) {
	h, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		return nil, fmt.Errorf("loading the C++ baseline library %s: %w", path, err)
	}
	fn, err := purego.Dlsym(h, "suite_run")
	if err != nil {
		return nil, fmt.Errorf("C++ baseline library %s: no suite_run (built without -DSUITE_LIB?): %w", path, err)
	}
	return &cppLib{run: fn}, nil
}

func (l *cppLib) suite(args []string) ([]byte, int) {
	argv := make([]*byte, len(args))
	for i, a := range args {
		b := make([]byte, len(a)+1)
		copy(b, a)
		argv[i] = &b[0]
	}
	var status int32
	p, _, _ := purego.SyscallN(l.run, uintptr(len(args)), uintptr(unsafe.Pointer(&argv[0])), uintptr(unsafe.Pointer(&status)))
	return []byte(cudart.GoString(p)), int(status)
}

// cbaselineLib returns the C++ baseline library: -cbaseline-lib, else suite.cu built with
// nvcc as a shared library for the device's architecture.
func cbaselineLib(ctx context.Context, o *options, cc string) (string, error) {
	if o.cbaselineLib != "" {
		return o.cbaselineLib, nil
	}
	out := filepath.Join(os.TempDir(), "libgpuactor-cbaseline.so")
	ok, err := buildSuite(ctx, cc, out, "-shared", "-Xcompiler", "-fPIC", "-DSUITE_LIB")
	if err != nil {
		return "", err
	}
	if !ok {
		return "", errors.New("-inprocess needs nvcc to build the C++ baseline library, or -cbaseline-lib PATH")
	}
	return out, nil
}

// refGroup is the gpuactor rows that compare with one C++ row (scenario and size): they run
// together between its passes, so that each C++ pass is the baseline of every row beside it.
type refGroup struct {
	ref          string
	size         int64
	sized, nodes bool // size is bytes (-sizes) or a graph's node count (-graph-sizes)
	tasks        []task
}

// groupByRef groups todo by C++ row, in the order each C++ row is first needed.
func groupByRef(todo []task) []refGroup {
	type key struct {
		ref  string
		size int64
	}
	at := map[key]int{}
	var out []refGroup
	for _, t := range todo {
		k := key{t.s.refName(), t.size}
		i, ok := at[k]
		if !ok {
			i = len(out)
			at[k] = i
			out = append(out, refGroup{ref: k.ref, size: k.size, sized: t.s.sized, nodes: t.s.nodes})
		}
		out[i].tasks = append(out[i].tasks, t)
	}
	return out
}

// suiteArgs are the flags of a C++ pass of g's row alone.
func (g refGroup) suiteArgs(o *options) []string {
	args := []string{"--scenarios", g.ref, "--repeat", strconv.Itoa(o.repeat), "--device", strconv.Itoa(o.device)}
	switch {
	case g.sized:
		args = append(args, "--sizes", strconv.FormatInt(g.size, 10))
	case g.nodes:
		args = append(args, "--graph-sizes", strconv.FormatInt(g.size, 10))
	}
	return args
}

// runInProcess runs gpuactor's rows on kind's device with the C++ rows of cpp interleaved:
// per C++ row, pass 1, then each round of its gpuactor rows followed by the next pass, so
// that round r sits between passes r and r+1 as in -rounds.
func runInProcess(ctx context.Context, o *options, kind device.BackendKind, cpp suitePasses, rep *Report) error {
	e, closeEnv, err := openEnv(ctx, o, kind, rep)
	if err != nil {
		return err
	}
	defer closeEnv()
	todo := plan(o)
	prog := &progress{total: len(todo) * o.rounds, start: time.Now()}
	for _, g := range groupByRef(todo) {
		args := g.suiteArgs(o)
		pass := func(n int) {
			out, status := cpp.suite(args)
			collectLines(rep, "cpp", n, out)
			if status != 0 {
				fmt.Fprintf(os.Stderr, "  C++ %s %s (pass %d) exited %d\n", g.ref, sizeLabel(g.size), n, status)
			}
		}
		pass(1)
		for r := 1; r <= o.rounds; r++ {
			for _, t := range g.tasks {
				runTask(e, kind, t, o.roundNumber(r), o.repeat, rep, prog)
			}
			pass(r + 1)
		}
	}
	return nil
}
