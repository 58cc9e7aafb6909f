package worker

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// ProfileEnv, set in the parent's environment (workers inherit it) or given with WithEnv,
// makes each worker write a CPU profile of its life, from its setup until it exits, to the
// file named by the variable's value followed by "." and the worker's process ID. A parent's
// own profile cannot see into its workers, whose one serving thread every isolated device's
// call and posted operation waits for. A worker killed (kill -9, a crash) writes nothing.
const ProfileEnv = "GPUACTOR_WORKER_CPUPROFILE"

// startProfile starts the CPU profile ProfileEnv asks for, if any, and returns what stops it
// and closes its file. A profile that cannot start is reported on standard error, and the
// worker runs on without it.
func startProfile() (stop func()) {
	prefix := os.Getenv(ProfileEnv)
	if prefix == "" {
		return func() {}
	}
	name := fmt.Sprintf("%s.%d", prefix, os.Getpid())
	f, err := os.Create(name)
	if err == nil {
		if err = pprof.StartCPUProfile(f); err != nil {
			_ = f.Close()
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "gpuactor worker (pid %d): no CPU profile (%s): %v\n", os.Getpid(), ProfileEnv, err)
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			fmt.Fprintf(os.Stderr, "gpuactor worker (pid %d): writing the CPU profile %s: %v\n", os.Getpid(), name, err)
		}
	}
}
