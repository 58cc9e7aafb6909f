package prometheus_test

import (
	"os"
	"testing"

	"github.com/gpuactor/gpuactor/isolate"
)

// The test binary is the worker of the isolated devices its tests open: isolate.Main serves
// one and exits in a worker, and returns at once here.
func TestMain(m *testing.M) {
	isolate.Main()
	// A race-detector worker would otherwise sleep a second at exit, each time.
	if _, ok := os.LookupEnv("GORACE"); !ok {
		_ = os.Setenv("GORACE", "atexit_sleep_ms=0")
	}
	os.Exit(m.Run())
}
