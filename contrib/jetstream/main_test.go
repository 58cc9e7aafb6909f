package jetstream_test

import (
	"os"
	"testing"
)

// The test binary is also the worker process of the fault test (workerMain): it serves jobs
// and never returns when the fault test started it so.
func TestMain(m *testing.M) {
	if os.Getenv(workerEnv) != "" {
		workerMain()
		return
	}
	os.Exit(m.Run())
}
