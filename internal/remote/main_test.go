//go:build linux

package remote_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/cudart"
	"github.com/gpuactor/gpuactor/internal/remote"
	"github.com/gpuactor/gpuactor/internal/sim"
	"github.com/gpuactor/gpuactor/internal/testproc"
	"github.com/gpuactor/gpuactor/internal/worker"
)

// The test binary is its own worker: in a worker, Main serves a simulator through Serve and
// exits; in the parent it returns at once. The worker runs the simulator kernels of
// testKernels, which the parent names when it loads a module.
func TestMain(m *testing.M) {
	worker.Main(remote.Serve(workerBackend(), remote.WithKernels(testKernels)))
	if _, ok := os.LookupEnv("GORACE"); !ok {
		_ = os.Setenv("GORACE", "atexit_sleep_ms=0")
	}
	code := m.Run()
	if kids := testproc.Children(); len(kids) > 0 && code == 0 {
		fmt.Fprintf(os.Stderr, "child processes left after the tests: %v\n", kids)
		code = 1
	}
	os.Exit(code)
}

// testKernels are the simulator kernels the test worker runs: fill(p, n, v) sets n int32s.
var testKernels = map[string]backend.SimKernel{
	"sleep": func(c *cuda.KernelCall) error { // sleep(ms): a kernel that takes a while
		time.Sleep(time.Duration(c.Int32(0)) * time.Millisecond)
		return nil
	},
	"fill": func(c *cuda.KernelCall) error {
		p := cuda.SimSlice[int32](c, 0, int(c.Int32(1)))
		for i := range p {
			p[i] = c.Int32(2)
		}
		return nil
	},
	"bump": func(c *cuda.KernelCall) error { // bump(): adds the global "step" to the global "counter"
		cuda.SimGlobal[int32](c, "counter")[0] += cuda.SimGlobal[int32](c, "step")[0]
		return nil
	},
}

// backendVar picks the worker's backend: "cudart" for the GPU tests, the simulator otherwise.
// It is set only in workers (WithEnv), so the parent never loads the CUDA runtime.
const backendVar = "REMOTE_TEST_BACKEND"

func workerBackend() backend.Backend {
	switch os.Getenv(backendVar) {
	case "sim-sticky": // the second stream operation faults, stickily
		return sim.New(sim.WithDevices(1), sim.WithFaults(0, sim.FaultPlan{StickyAt: 2}))
	case "cudart":
	default:
		return newSim()
	}
	rt, err := cudart.Load()
	if err != nil {
		fmt.Fprintln(os.Stderr, "test worker: loading the CUDA runtime:", err)
		os.Exit(2)
	}
	return cudart.NewBackend(rt)
}

// newSim is the backend both the worker and the in-process comparisons use.
func newSim() *sim.Backend { return sim.New(sim.WithDevices(1), sim.WithMemory(1<<30)) }

// open starts a worker and opens its device 0; both are closed when the test ends.
func open(t testing.TB) (*remote.Backend, *remote.Device) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	be, err := remote.New(ctx, func(ctx context.Context) (*worker.Process, error) { return remote.Start(ctx) })
	require.NoError(t, err)
	t.Cleanup(func() { _ = be.Close() })
	dv, err := be.Open(0)
	require.NoError(t, err)
	return be, dv.(*remote.Device)
}

// startOnly starts a worker without opening a device.
func startOnly(t testing.TB) *remote.Backend {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	be, err := remote.New(ctx, func(ctx context.Context) (*worker.Process, error) { return remote.Start(ctx) })
	require.NoError(t, err)
	t.Cleanup(func() { _ = be.Close() })
	return be
}
