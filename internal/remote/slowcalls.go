package remote

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"time"
)

// slowCallsEnv names the diagnostic for stalls of isolated devices: set to a duration, the
// parent logs to standard error every call to a worker that took at least that long, from
// send to answer, and the worker every request that took it that long to serve. A call slow
// in the parent but not in the worker waited for the worker's thread or the rings; one slow
// in both waited for the runtime (docs/design/service-tail.md).
const slowCallsEnv = "GPUACTOR_SLOW_CALLS"

// slowCalls is slowCallsEnv's duration, read once; 0: off.
var slowCalls = func() time.Duration {
	d, err := time.ParseDuration(os.Getenv(slowCallsEnv))
	if err != nil || d <= 0 {
		return 0
	}
	return d
}()

// noteSlow logs to w a call of req's method that took since start, when it took at least
// slowCalls; who says which side timed it.
func noteSlow(w io.Writer, who string, req []byte, start time.Time) {
	took := time.Since(start)
	if slowCalls <= 0 || took < slowCalls || len(req) < 8 {
		return
	}
	name := "method ?"
	if m := method(binary.LittleEndian.Uint64(req)); m < numMethods {
		name = methodNames[m]
	}
	fmt.Fprintf(w, "gpuactor remote: %s %s took %v\n", who, name, took)
}
