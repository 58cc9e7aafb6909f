package nvtx

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRangeNameOnContext(t *testing.T) {
	ctx := WithRange(context.Background(), "step")
	assert.Equal(t, "step", RangeName(ctx))
	assert.Empty(t, RangeName(context.Background()))
	var none context.Context
	assert.Empty(t, RangeName(none), "a nil ctx")
}

// Without NVTX_INJECTION64_PATH (this test process has none) no tool attaches and every call
// is a no-op.
func TestNoToolIsANoOp(t *testing.T) {
	if os.Getenv("NVTX_INJECTION64_PATH") != "" {
		t.Skip("a tool is attached to this process")
	}
	assert.False(t, Active())
	Push("x")
	Pop()
	Mark("x")
	End(Start("x"))
	assert.Empty(t, Named(WithRange(context.Background(), "x")))
}

// buildRecorder compiles testdata/recorder.c into a shared library, skipping without a C
// compiler.
func buildRecorder(t *testing.T) string {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the loader is Linux-only")
	}
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler to build the recording injection library")
	}
	lib := filepath.Join(t.TempDir(), "librecorder.so")
	out, err := exec.Command(cc, "-shared", "-fPIC", "-O1", "-o", lib, "testdata/recorder.c", "-lpthread").CombinedOutput()
	require.NoError(t, err, "%s", out)
	return lib
}

// TestInjectedToolReceivesRanges runs the helper below in a child process with the recording
// library as its NVTX tool, and checks what the tool received.
func TestInjectedToolReceivesRanges(t *testing.T) {
	lib := buildRecorder(t)
	rec := filepath.Join(t.TempDir(), "record.txt")
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperEmitRanges$", "-test.count=1")
	cmd.Env = append(os.Environ(), "NVTX_INJECTION64_PATH="+lib, "NVTX_RECORD_FILE="+rec, "GPUACTOR_NVTX_HELPER=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	b, err := os.ReadFile(rec)
	require.NoError(t, err)
	assert.Equal(t, []string{"init ", "thread gpuactor worker", "push outer", "push inner", "pop ", "pop ", "mark here", "start job", "end 101"},
		strings.Split(strings.TrimSpace(string(b)), "\n"))
}

func TestHelperEmitRanges(t *testing.T) {
	if os.Getenv("GPUACTOR_NVTX_HELPER") != "1" {
		t.Skip("run by TestInjectedToolReceivesRanges")
	}
	require.True(t, Active())
	assert.Equal(t, "a", Named(WithRange(context.Background(), "a")))
	NameThread(1, "gpuactor worker")
	Push("outer")
	Push("inner")
	Pop()
	Pop()
	Mark("here")
	End(Start("job"))
}

// BenchmarkNamedWithoutTool is what every operation's send pays when no tool is attached.
func BenchmarkNamedWithoutTool(b *testing.B) {
	ctx := WithRange(context.Background(), "x")
	for b.Loop() {
		if Named(ctx) != "" {
			b.Fatal("a tool is attached")
		}
	}
}
