package worker

import (
	"os"
	"strconv"
	"strings"
)

// envVar marks a process as a worker: Main runs the worker's role when it is set. Its value
// is the protocol version, so a worker binary of another version refuses clearly.
const envVar = "GPUACTOR_WORKER"

// controlFD is the control socket's descriptor in the worker: ExtraFiles[0].
const controlFD = 3

// workerEnv is the parent's environment, without its own envVar, with extra and the marker.
func workerEnv(extra []string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, envVar+"=") {
			env = append(env, kv)
		}
	}
	env = append(env, extra...)
	return append(env, envVar+"="+strconv.Itoa(protocolVersion))
}
