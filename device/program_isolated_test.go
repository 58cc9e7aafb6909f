//go:build linux

package device_test

import (
	"io"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/isolate"
	"github.com/gpuactor/gpuactor/sim"
)

// An isolated device whose worker was killed is replaced by a new one: the program loads on
// it as on any device.
func TestProgramOnIsolatedDevices(t *testing.T) {
	ctx := testdev.Ctx(t)
	opts := []device.Option{device.WithSimulator(sim.New()), device.WithKernelCache(t.TempDir()), device.Isolated(isolate.WithStderr(io.Discard))}
	prog := device.NewProgram(device.Source{Name: "saxpy_prog.cu", Code: saxpySource, Sim: saxpySim})
	defer prog.Close(ctx)
	first := openDev(t, opts)
	k, err := prog.Kernel(ctx, first, "saxpy")
	require.NoError(t, err)
	runSaxpy(t, first, k)
	require.NoError(t, syscall.Kill(first.WorkerPID(), syscall.SIGKILL))
	require.Eventually(t, func() bool { return first.Err() != nil }, 10*time.Second, time.Millisecond)
	require.NoError(t, first.Close())

	next := openDev(t, opts)
	k, err = prog.Kernel(ctx, next, "saxpy")
	require.NoError(t, err)
	runSaxpy(t, next, k)
	assert.EqualValues(t, 1, device.ProgramCompilesForTest(prog))
}
