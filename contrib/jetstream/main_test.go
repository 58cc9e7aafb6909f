package jetstream_test

import (
	"os"
	"testing"
)

// The test binary is also the worker process of the fault tests (workerMain), and a NATS
// server of the cluster test (serverMain): started so, it serves until killed.
func TestMain(m *testing.M) {
	if os.Getenv(serverEnv) != "" {
		serverMain()
		return
	}
	if os.Getenv(workerEnv) != "" {
		workerMain()
		return
	}
	os.Exit(m.Run())
}
