//go:build linux

package device_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/internal/testgpu"
	"github.com/gpuactor/gpuactor/streams"
)

// TestNVTXRangesReachTheTool runs TestNVTXHelper in a child process whose NVTX tool is a
// recording injection library (internal/nvtx/testdata/recorder.c, built with cc; skipped
// without one) and checks what the tool received: the actor thread's name, a range around the
// operation sent with WithRange, and the host range.
func TestNVTXRangesReachTheTool(t *testing.T) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler to build the recording injection library")
	}
	lib := filepath.Join(t.TempDir(), "librecorder.so")
	out, err := exec.Command(cc, "-shared", "-fPIC", "-O1", "-o", lib, "../internal/nvtx/testdata/recorder.c", "-lpthread").CombinedOutput()
	require.NoError(t, err, "%s", out)
	for _, be := range []string{"sim", "cuda"} {
		t.Run(be, func(t *testing.T) {
			if be == "cuda" {
				testgpu.Need(t, testdev.GPU(), "the cuda backend sees no device")
			}
			rec := filepath.Join(t.TempDir(), "record.txt")
			cmd := exec.Command(os.Args[0], "-test.run=^TestNVTXHelper$", "-test.count=1")
			cmd.Env = append(os.Environ(), "NVTX_INJECTION64_PATH="+lib, "NVTX_RECORD_FILE="+rec, "GPUACTOR_NVTX_HELPER="+be)
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s", out)
			b, err := os.ReadFile(rec)
			require.NoError(t, err)
			lines := strings.Split(strings.TrimSpace(string(b)), "\n")
			assert.Contains(t, lines, "thread gpuactor device 0")
			assert.Equal(t, 1, count(lines, "push clear"), "one range for the one named operation:\n%s", b)
			assert.Equal(t, count(lines, "push clear"), count(lines, "pop "), "every range closed")
			assert.Contains(t, lines, "start request")
			assert.Contains(t, lines, "mark done")
		})
	}
}

func count(lines []string, s string) int {
	n := 0
	for _, l := range lines {
		if l == s {
			n++
		}
	}
	return n
}

func TestNVTXHelper(t *testing.T) {
	be := os.Getenv("GPUACTOR_NVTX_HELPER")
	if be == "" {
		t.Skip("run by TestNVTXRangesReachTheTool")
	}
	require.True(t, device.Profiling(), "the recording tool attached")
	ctx := context.Background()
	dev, err := device.Open(ctx, 0, device.WithBackend(device.BackendKind(be)))
	require.NoError(t, err)
	defer dev.Close()
	end := device.StartRange("request")
	buf, err := dev.MallocBytes(ctx, 4096)
	require.NoError(t, err)
	s := streams.Default(dev)
	require.NoError(t, s.Memset(ctx, buf, 1).Wait(ctx), "unnamed")
	require.NoError(t, s.Memset(device.WithRange(ctx, "clear"), buf, 0).Wait(ctx))
	end()
	device.Mark("done")
}
