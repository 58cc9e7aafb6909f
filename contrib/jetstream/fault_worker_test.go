package jetstream_test

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	js "github.com/gpuactor/gpuactor/contrib/jetstream"
	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/group"
	"github.com/gpuactor/gpuactor/sim"
	"github.com/gpuactor/gpuactor/streams"
)

// The environment of a worker process of the fault test: its name, the server's URL, its
// device count, the slowdown of its device 0, and after how many jobs its device 0 faults
// (0: never).
const (
	workerEnv   = "GPUACTOR_JS_WORKER"
	urlEnv      = "GPUACTOR_JS_URL"
	devicesEnv  = "GPUACTOR_JS_DEVICES"
	slowEnv     = "GPUACTOR_JS_SLOW"
	faultAtEnv  = "GPUACTOR_JS_FAULT_AT"
	replicasEnv = "GPUACTOR_JS_REPLICAS"
	ackWaitTest = time.Second
)

// workerMain serves the fault test's jobs from a process of its own until it is killed, or
// drains and exits on SIGTERM.
func workerMain() {
	if err := serveWorker(); err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

func serveWorker() error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	n, _ := strconv.Atoi(os.Getenv(devicesEnv))
	slow, _ := strconv.ParseFloat(os.Getenv(slowEnv), 64)
	faultAt, _ := strconv.ParseInt(os.Getenv(faultAtEnv), 10, 64)
	s, devs, err := openSims(ctx, n, sim.WithSlowdown(0, slow))
	if err != nil {
		return err
	}
	g, err := group.New(ctx, devs)
	if err != nil {
		return err
	}
	defer g.Close(context.Background())
	replicas, _ := strconv.Atoi(os.Getenv(replicasEnv))
	conn, err := js.Connect(ctx, js.WithURL(strings.Split(os.Getenv(urlEnv), ",")...), js.WithAckWait(ackWaitTest),
		js.WithMaxAttempts(20), js.WithReplicas(max(1, replicas)))
	if err != nil {
		return err
	}
	defer conn.Close()
	w := js.NewWorker(conn, g, js.WithWorkerName(os.Getenv(workerEnv)))
	var jobs atomic.Int64
	err = w.Handle("work", func(ctx context.Context, d *device.Device, st *streams.Stream, in []byte) ([]byte, error) {
		if jobs.Add(1) == faultAt {
			if err := s.Fail(0, cudaerr.IllegalAddress); err == nil { // device 0 meets it at its next operation
				fmt.Println("faulted device 0")
			}
		}
		return echo(ctx, d, st, in)
	})
	if err != nil {
		return err
	}
	return w.Serve(ctx)
}
