// Command bench is gpuactor's benchmark suite: named scenarios run through gpuactor on every
// backend present and, on a GPU host, side by side with the project's own C++ baseline
// (bench/cbaseline, built with nvcc in the same run) and, where Python has them, CuPy and
// cuda.core (bench/peers). It prints one table per backend with the ratio to C++, and can
// save JSON and plots under bench/results/<gpu>/, one folder per GPU holding its latest run.
// It is a module of its own, so that its plotting dependencies never reach gpuactor's users;
// run it from bench/:
//
//	go run .                          # every backend present, all scenarios
//	go run . -backend sim -repeat 3   # the simulator only (CI's smoke run)
//	go run . -scenarios launch_enqueue,h2d_pinned -sizes 4096,1048576 -json out.json
//	go run . -save                    # also write bench/results/<gpu>/
//	go run . -scenarios launch_enqueue,isolated_launch_enqueue
//	                                  # a row in process and on an isolated device (isolated_rows.go)
//	go run . -backend cuda -inprocess -rounds 101 -graph-sizes 1,10 -scenarios graph_node_launchn
//	                                  # C++ passes in this process, around each row
//
// The testing.B benchmarks beside it (go test -bench . in bench/) measure the actor's costs
// against the binding called directly.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gpuactor/gpuactor/device"
)

type options struct {
	backend      string
	scenarios    map[string]bool
	sizes        []int64
	repeat       int
	jsonPath     string
	cpuProfile   string // -cpuprofile
	save         bool
	outDir       string
	cbaseline    string
	built        string // the C++ baseline built by this run
	peers        bool
	peersScript  string // the peers' script; "": bench/peers/peers.py (peersScript), when python3 is there
	device       int
	copiers      int           // streams.StagingWorkers for the staged rows; 0: the library's choice
	awaitSpin    time.Duration // the device actor's Await spin (device.ActorTuning.AwaitSpin); 0: the library's default
	simDevices   int           // devices of one simulator the sim rows share; 0: each Open's own simulator, of the default size
	rounds       int           // on the GPU: how many times gpuactor's rows run, each between two C++ passes
	inprocess    bool          // on the GPU: the C++ baseline as a library in this process, its passes around each row
	cbaselineLib string        // prebuilt C++ baseline library for -inprocess
	cppThread    string        // -inprocess: "actor" (the device actor's thread, the default) or "own" (a thread of the bench's)
	graphSizes   []int64       // the graph rows' node counts to run; nil: all
	// waiterQuery are the settings of device.ActorTuning.WaiterQuery each round runs gpuactor's
	// rows with, one after the other; with more than one, each row's name gets the setting's
	// suffix (variantSuffix). nil: the library's default, names unchanged.
	waiterQuery []device.WaiterQuery
}

func main() {
	serveWorker() // in a worker process of an isolated device, serves it and exits
	o, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	stop, err := startProfile(o.cpuProfile)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	err = run(context.Background(), o)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// startProfile writes a CPU profile of the whole run to path ("" for none) until stop.
func startProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

func parseFlags(args []string) (*options, error) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	o := &options{}
	var scen, sizes, graphSizes, waiterQuery string
	fs.StringVar(&o.backend, "backend", "all", "all (every backend present), cuda or sim")
	fs.StringVar(&scen, "scenarios", "", "comma-separated scenario names (default: all but the opt-in rows, which run only when named here): "+strings.Join(scenarioNames(), ","))
	fs.StringVar(&sizes, "sizes", "4096,65536,1048576,16777216,268435456", "bytes, for the bandwidth scenarios (K, M, G suffixes allowed)")
	fs.IntVar(&o.repeat, "repeat", 21, "timed repeats per figure (the median is reported)")
	fs.StringVar(&o.jsonPath, "json", "", "write every result as JSON to this file")
	fs.BoolVar(&o.save, "save", false, "write JSON and plots under -out")
	fs.StringVar(&o.outDir, "out", "", "results directory for -save (default bench/results/<gpu>)")
	fs.StringVar(&o.cbaseline, "cbaseline", "", "prebuilt C++ baseline binary (default: build bench/cbaseline/suite.cu with nvcc when present; 'off' to skip)")
	fs.BoolVar(&o.peers, "peers", true, "run bench/peers/peers.py (CuPy, cuda.core) after the C++ baseline in every pass, when python3 is there")
	fs.IntVar(&o.device, "device", 0, "device ordinal")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the run (gpuactor's rows and the bench around them) to this file")
	fs.IntVar(&o.copiers, "staging-workers", 0, "goroutines copying host memory in the staged rows (streams.StagingWorkers; 0: sized to the host)")
	fs.IntVar(&o.simDevices, "sim-devices", 0, "on the simulator, how many devices it has, all opened on one simulator (0: its default, a simulator per device opened); the fan-out rows run on up to this many")
	fs.DurationVar(&o.awaitSpin, "await-spin", 0, "how long a caller's Await spins before parking (device.ActorTuning.AwaitSpin; 0: the library's default). C++'s cudaStreamSynchronize spins for as long as it waits")
	fs.IntVar(&o.rounds, "rounds", 1, "on the GPU, run gpuactor's rows this many times, each between two C++ passes, and report the median ratio over rounds (for noisy hosts)")
	fs.BoolVar(&o.inprocess, "inprocess", false, "on the GPU, load the C++ baseline into this process as a library and run each gpuactor row between two passes of its C++ row, moments apart (the peers do not run)")
	fs.StringVar(&o.cppThread, "cpp-thread", "", "with -inprocess, where the C++ passes run: actor (the device actor's thread, the one gpuactor's rows call CUDA from; the default) or own (a thread of the bench's, as a C++ program's main thread)")
	fs.StringVar(&o.cbaselineLib, "cbaseline-lib", "", "prebuilt C++ baseline library for -inprocess (default: build bench/cbaseline/suite.cu with nvcc -shared -DSUITE_LIB)")
	fs.StringVar(&graphSizes, "graph-sizes", "", "node counts of the graph rows to run, from "+joinSizes(graphNodeCounts)+" (default: all)")
	fs.StringVar(&waiterQuery, "waiter-query", "", "comma-separated settings of device.ActorTuning.WaiterQuery (on, off, default) to run gpuactor's rows with, each in every round, between the same C++ passes: with two or more, each row is reported once per setting, named <row>"+variantSuffix("<setting>")+" (default: the library's default, one run)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	wq, err := parseWaiterQuery(waiterQuery)
	if err != nil {
		return nil, err
	}
	o.waiterQuery = wq
	if len(wq) > 1 && o.inprocess {
		return nil, fmt.Errorf("-waiter-query with several settings is not for -inprocess, which runs one device")
	}
	if o.copiers < 0 {
		return nil, fmt.Errorf("-staging-workers must not be negative, got %d", o.copiers)
	}
	if o.repeat < 1 {
		return nil, fmt.Errorf("-repeat must be at least 1, got %d", o.repeat)
	}
	if o.simDevices < 0 {
		return nil, fmt.Errorf("-sim-devices must not be negative, got %d", o.simDevices)
	}
	if o.awaitSpin < 0 {
		return nil, fmt.Errorf("-await-spin must not be negative, got %v", o.awaitSpin)
	}
	if o.rounds < 1 {
		return nil, fmt.Errorf("-rounds must be at least 1, got %d", o.rounds)
	}
	if o.cbaselineLib != "" && !o.inprocess {
		return nil, fmt.Errorf("-cbaseline-lib is for -inprocess")
	}
	switch {
	case o.cppThread != "" && o.cppThread != "own" && o.cppThread != "actor":
		return nil, fmt.Errorf("-cpp-thread must be own or actor, got %q", o.cppThread)
	case o.cppThread != "" && !o.inprocess:
		return nil, fmt.Errorf("-cpp-thread is for -inprocess")
	case o.cppThread == "" && o.inprocess:
		o.cppThread = "actor"
	}
	if o.inprocess && o.cbaseline == "off" {
		return nil, fmt.Errorf("-inprocess runs the C++ baseline: it cannot be -cbaseline off")
	}
	switch o.backend {
	case "all", "cuda", "sim":
	default:
		return nil, fmt.Errorf("-backend must be all, cuda or sim, got %q", o.backend)
	}
	if o.sizes, err = parseSizes(sizes); err != nil {
		return nil, err
	}
	if graphSizes != "" {
		for _, f := range strings.Split(graphSizes, ",") {
			n, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
			if err != nil || !slices.Contains(graphNodeCounts, n) {
				return nil, fmt.Errorf("bad node count %q in -graph-sizes (have %s)", f, joinSizes(graphNodeCounts))
			}
			o.graphSizes = append(o.graphSizes, n)
		}
	}
	if scen != "" {
		o.scenarios = map[string]bool{}
		known := map[string]bool{}
		for _, n := range scenarioNames() {
			known[n] = true
		}
		for _, n := range strings.Split(scen, ",") {
			n = strings.TrimSpace(n)
			if !known[n] {
				return nil, fmt.Errorf("unknown scenario %q (have %s)", n, strings.Join(scenarioNames(), ", "))
			}
			o.scenarios[n] = true
		}
	}
	return o, nil
}

func parseSizes(s string) ([]int64, error) {
	var out []int64
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(strings.ToUpper(f))
		mult := int64(1)
		switch {
		case strings.HasSuffix(f, "K"):
			mult, f = 1<<10, strings.TrimSuffix(f, "K")
		case strings.HasSuffix(f, "M"):
			mult, f = 1<<20, strings.TrimSuffix(f, "M")
		case strings.HasSuffix(f, "G"):
			mult, f = 1<<30, strings.TrimSuffix(f, "G")
		}
		v, err := strconv.ParseInt(f, 10, 64)
		if err != nil || v <= 0 {
			return nil, fmt.Errorf("bad size %q in -sizes", f)
		}
		out = append(out, v*mult)
	}
	return out, nil
}

func scenarioNames() []string {
	var names []string
	for _, s := range scenarios() {
		names = append(names, s.name)
	}
	return names
}

func (o *options) wants(name string) bool { return o.scenarios == nil || o.scenarios[name] }

// roundNumber is what Result.Round records for round r (from 1): r, or 0 when the rows run once.
func (o *options) roundNumber(r int) int {
	if o.rounds == 1 {
		return 0
	}
	return r
}

// progress prints a one-line status to stderr, overwritten in place on a terminal.
type progress struct {
	done, total int
	start       time.Time
}

func (p *progress) step(what string) {
	p.done++
	fmt.Fprintf(os.Stderr, "[%d/%d %4.0fs] %s\n", p.done, p.total, time.Since(p.start).Seconds(), what)
}
