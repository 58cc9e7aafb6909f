package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
	"github.com/gpuactor/gpuactor/internal/cudart"
)

// With -inprocess, the C++ baseline is suite.cu built as a shared library and loaded into the
// bench's own process, and each gpuactor row runs between two passes of its C++ row, moments
// apart, rather than the whole suite between two runs of the C++ program. On shared GPU hosts
// the C++ figures for one-node graphs move by as much as the row itself between passes a
// minute apart, which swamps a 5% target; passes milliseconds apart, in one process on one
// context, drift far less. Both sides then share the process's state too: graphs run slower
// per node once a process has had work on several streams, and here the C++ rows' stream and
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
	// dlerror, which purego asks for a failure's reason, answers for the calling thread only.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	h, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		return nil, fmt.Errorf("loading the C++ baseline library %s: %w", path, err)
	}
	fn, err := purego.Dlsym(h, "suite_run")
	if err != nil {
		return nil, fmt.Errorf("the C++ baseline library %s has no suite_run (built without -DSUITE_LIB?): %w", path, err)
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

// cppRows is the C++ rows a pass of g runs: its row, then its tasks' byHand rows, so that
// those share the passes of the row their tasks are held to.
func (g refGroup) cppRows() []string {
	rows := []string{g.ref}
	for _, t := range g.tasks {
		for _, r := range t.s.cppRows() {
			if !slices.Contains(rows, r) {
				rows = append(rows, r)
			}
		}
	}
	return rows
}

// suiteArgs are the flags of a C++ pass of g's rows.
func (g refGroup) suiteArgs(o *options) []string {
	args := []string{"--scenarios", strings.Join(g.cppRows(), ","), "--repeat", strconv.Itoa(o.repeat), "--device", strconv.Itoa(o.device)}
	switch {
	case g.sized:
		args = append(args, "--sizes", strconv.FormatInt(g.size, 10))
	case g.nodes:
		args = append(args, "--graph-sizes", strconv.FormatInt(g.size, 10))
	}
	return args
}

// rotated returns tasks starting at index k mod len(tasks), wrapping round. A round's rows run
// in this order with k its number, so that each row of a group follows the C++ pass as often
// as the others and none carries what running first (or last) does to it: a one-node graph
// row's median can move with the row that ran before it.
func rotated(tasks []task, k int) []task {
	if len(tasks) == 0 {
		return nil
	}
	k %= len(tasks)
	return append(append(make([]task, 0, len(tasks)), tasks[k:]...), tasks[:k]...)
}

// runInProcess runs gpuactor's rows on kind's device with the C++ rows of cpp interleaved:
// per C++ row, pass 1, then each round of its gpuactor rows followed by the next pass, so
// that round r sits between passes r and r+1 as in -rounds.
func runInProcess(ctx context.Context, o *options, kind device.BackendKind, cpp suitePasses, rep *Report) error {
	e, closeEnv, err := openEnv(ctx, o, kind, o.variants()[0], rep)
	if err != nil {
		return err
	}
	defer closeEnv()
	todo := plan(o)
	prog := &progress{total: len(todo) * o.rounds, start: time.Now()}
	for _, g := range groupByRef(todo) {
		args := g.suiteArgs(o)
		pass := func(n int) {
			out, status := suiteOn(e, o.cppThread, cpp, args)
			collectLines(rep, "cpp", n, out)
			if status != 0 {
				fmt.Fprintf(os.Stderr, "  C++ %s %s (pass %d) exited %d\n", g.ref, sizeLabel(g.size), n, status)
			}
		}
		pass(1)
		for r := 1; r <= o.rounds; r++ {
			for _, t := range rotated(g.tasks, r-1) {
				runTask(e, kind, t, o.roundNumber(r), o.repeat, rep, prog)
			}
			pass(r + 1)
		}
	}
	return nil
}

// suiteOn runs one C++ pass on the thread -cpp-thread names: the device actor's, where
// gpuactor's rows make their CUDA calls (the default), or a thread of the bench's own, as a
// C++ program runs its loops on its main thread. A one-node graph's launch is a couple of
// microseconds of driver work on the calling core, and which core decides it: the cores of a
// GPU host differ by a fifth or more, and which ones are slow changes from one process to the
// next (bench/results/FINDINGS.md). A pass on a thread of its own may sit on another core than
// the actor's, and its ratio then measures the cores. On the actor's thread both sides run on
// the same one.
func suiteOn(e *env, thread string, cpp suitePasses, args []string) ([]byte, int) {
	if thread != "actor" {
		return cpp.suite(args)
	}
	type result struct {
		out    []byte
		status int
	}
	r, err := core.Run(e.ctx, (*core.Device)(e.dev), func(backend.Device, *core.Tracker) (result, error) {
		out, status := cpp.suite(args)
		return result{out, status}, nil
	}).Await(e.ctx)
	if err != nil {
		fmt.Fprintf(os.Stderr, "  C++ pass on the actor's thread: %v\n", err)
		return nil, 1
	}
	return r.out, r.status
}
