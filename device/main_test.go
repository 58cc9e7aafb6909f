package device_test

import (
	"os"
	"testing"
	"time"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/isolate"
)

// spinForeverSim is spin_forever's twin: a kernel that does not end while the test runs.
func spinForeverSim(*cuda.KernelCall) error {
	time.Sleep(time.Hour)
	return nil
}

// The test binary is the worker of the isolated devices its tests open: isolate.Main serves one
// and exits in a worker, and returns at once here. The worker runs the simulator kernels the
// tests load, by name.
func TestMain(m *testing.M) {
	isolate.Main(isolate.WithKernels(saxpySim), isolate.WithKernels(testdev.OOBSim),
		isolate.WithKernels(map[string]cuda.SimKernel{"add_u32": testdev.AddU32Sim, "spin_forever": spinForeverSim}))
	// A race-detector worker would otherwise sleep a second at exit, each time.
	if _, ok := os.LookupEnv("GORACE"); !ok {
		_ = os.Setenv("GORACE", "atexit_sleep_ms=0")
	}
	os.Exit(m.Run())
}
