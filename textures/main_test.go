package textures_test

import (
	"os"
	"testing"

	"github.com/gpuactor/gpuactor/isolate"
)

// The test binary is the worker of the isolated devices its tests open; the worker runs the
// sampling kernels' Go twins by name.
func TestMain(m *testing.M) {
	isolate.Main(isolate.WithKernels(samplingSim))
	if _, ok := os.LookupEnv("GORACE"); !ok {
		_ = os.Setenv("GORACE", "atexit_sleep_ms=0")
	}
	os.Exit(m.Run())
}
