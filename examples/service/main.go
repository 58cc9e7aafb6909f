// Command service is a GPU-backed HTTP service over every device, as the README describes
// one: a group (package group) places each request on a device, the devices run in worker
// processes of their own (device.Isolated) and the group reopens one that fails
// (group.WithRestart), so that a poisoned kernel or a killed worker costs the service a
// fraction of a second and no request.
//
//	POST /saxpy?a=A   body: x then y, n little-endian float32 each; answer: a*x+y (n floats)
//	GET  /healthz     every device's health as JSON: 503 when no device takes work
//	GET  /metrics     the group and its devices for Prometheus (contrib/prometheus)
//
// On SIGINT or SIGTERM it shuts down within -grace: the HTTP server first (answering what it
// accepted), then the group, then the devices.
//
// With -load it also runs a load generator against itself: -clients clients, each sending
// requests of -size bytes per vector for -duration and checking every element of every answer
// (a fraction -cancel of them cancelled at a random moment); -fault poison or -fault kill
// injects a fault on device -fault-device after -fault-after. Then it waits for every device
// to be healthy again, shuts down, and prints what it saw. Without a GPU, or with -sim N, it
// runs on the simulator (N devices; GPUACTOR_BACKEND=sim with GPUACTOR_SIM_DEVICES=N does the
// same). With -trace-slow D the load keeps a runtime/trace flight recorder running and, when a
// request takes longer than D, writes its window to -trace-dir/slow-N.trace (at most -trace-max
// files, one per -trace-window), in which each request is marked (slowtrace.go): the files are
// for ./tracetool, which says what a slow request waited on.
//
//	go run . -load -clients 64 -duration 10s -fault poison
//	go run . -load -trace-slow 20ms -trace-dir /tmp/traces && go run ./tracetool /tmp/traces/slow-1.trace
//	go run . -sim 4 -addr 127.0.0.1:8080
//
// The module is a program of its own: copy the folder out of the repository, delete go.work,
// and it builds against the released gpuactor modules.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/gpuactor/gpuactor/isolate"
)

type config struct {
	addr         string
	backend      string // cuda, sim or auto; "" leaves it to GPUACTOR_BACKEND
	sim          int    // simulated devices instead of the backend's; 0: the backend's
	load         bool
	clients      int
	size         int // bytes of x (and of y) per request
	duration     time.Duration
	cancel       float64       // fraction of requests cancelled
	cancelWithin time.Duration // when a cancelled request is cancelled, at most
	perDevice    int           // streams per device: the jobs each runs at once
	stagingMiB   int
	restarts     int           // restarts per device per minute before the group gives up on it
	grace        time.Duration // how long shutdown waits for work in progress
	park         bool          // the actors park instead of spinning
	fault        string        // "", poison or kill
	faultAfter   time.Duration
	faultDevice  int
	traceSlow    time.Duration // load: write the flight recorder's window when a request takes longer; 0: no trace
	traceDir     string
	traceWindow  time.Duration
	traceBytes   int
	traceMax     int
	reuseBuffers bool   // keep each stream's device buffers for its next job instead of MallocAsync per request
	cpuProfile   string // load: write a CPU profile of the load here; with -trace-slow the traces hold its samples
	log          *slog.Logger
	out          io.Writer // where the service's lines go
}

func main() {
	// First thing: in an isolated device's worker (this program run again), serve the device
	// with the simulator's kernels, and exit.
	isolate.Main(isolate.WithKernels(simKernels))
	c := config{log: slog.New(slog.NewTextHandler(os.Stderr, nil)), out: os.Stdout}
	flag.StringVar(&c.addr, "addr", "127.0.0.1:8080", "listen address (with -load: 127.0.0.1:0)")
	flag.StringVar(&c.backend, "backend", "", "cuda, sim or auto (default: $GPUACTOR_BACKEND, else auto)")
	flag.IntVar(&c.sim, "sim", 0, "run on this many simulated devices instead of the GPUs (0: the -backend's devices)")
	flag.BoolVar(&c.load, "load", false, "run a load generator against the service, then shut down")
	flag.IntVar(&c.clients, "clients", 64, "load: concurrent clients")
	flag.IntVar(&c.size, "size", 16<<10, "load: bytes per vector per request (x and y each)")
	flag.DurationVar(&c.duration, "duration", 10*time.Second, "load: how long to send requests")
	flag.Float64Var(&c.cancel, "cancel", 0, "load: fraction of requests cancelled at a random moment")
	flag.DurationVar(&c.cancelWithin, "cancel-within", time.Millisecond, "load: cancelled requests end within this")
	flag.IntVar(&c.perDevice, "streams", 8, "streams per device")
	flag.IntVar(&c.stagingMiB, "staging", 256, "staging pool cap per device, MiB")
	flag.IntVar(&c.restarts, "restarts", 10, "restarts per device per minute before the group gives up on it")
	flag.DurationVar(&c.grace, "grace", 10*time.Second, "shutdown deadline")
	flag.BoolVar(&c.park, "park", false, "actors park instead of spinning: less CPU, more latency per request")
	flag.StringVar(&c.fault, "fault", "", "inject a fault: poison (a kernel that traps) or kill (kill -9 of the device's worker)")
	flag.DurationVar(&c.faultAfter, "fault-after", time.Second, "when to inject -fault, after the service starts")
	flag.IntVar(&c.faultDevice, "fault-device", 0, "the device -fault hits (its place in the group)")
	flag.DurationVar(&c.traceSlow, "trace-slow", 0, "load: keep an execution trace flight recorder running and write its window when a request takes longer than this (0: off)")
	flag.StringVar(&c.traceDir, "trace-dir", ".", "load: where -trace-slow writes slow-N.trace")
	flag.DurationVar(&c.traceWindow, "trace-window", defaultTraceWindow, "load: the least time each -trace-slow file covers, up to -trace-bytes")
	flag.IntVar(&c.traceBytes, "trace-bytes", defaultTraceBytes, "load: the flight recorder's size bound, bytes")
	flag.IntVar(&c.traceMax, "trace-max", defaultTraceMax, "load: the most -trace-slow files written, at most one per -trace-window")
	flag.BoolVar(&c.reuseBuffers, "reuse-buffers", false, "keep each stream's device buffers for its next request instead of allocating and freeing them per request")
	flag.StringVar(&c.cpuProfile, "cpuprofile", "", "load: write a CPU profile of the load to this file (with -trace-slow the traces hold its samples too)")
	flag.Parse()
	if c.load && c.addr == "127.0.0.1:8080" {
		c.addr = "127.0.0.1:0"
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if _, err := run(ctx, c); err != nil {
		fmt.Println("FAIL:", err)
		os.Exit(1)
	}
	fmt.Println("PASS")
}
