package cudart

import (
	"os"
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/internal/testgpu"
)

// debianCudart is where Debian's CUDA 11.8 runtime lives (the CPU-only CI machine).
const (
	debianDir    = "/usr/lib/x86_64-linux-gnu"
	debianCudart = debianDir + "/libcudart.so.11.0"
	debianNVRTC  = debianDir + "/libnvrtc.so.11.2"
)

// requireCudart is set by scripts/test.sh once it has installed Debian's CUDA 11.8 runtime:
// then the tests that need a libcudart (but no GPU) must run instead of skipping.
var requireCudart = os.Getenv("GPUACTOR_REQUIRE_CUDART") == "1"

// needDebian118 skips tests that check facts about Debian's 11.8 packages.
func needDebian118(t testing.TB) {
	t.Helper()
	if _, err := os.Stat(debianCudart); err != nil {
		if requireCudart && !testgpu.Required() {
			t.Fatalf("GPUACTOR_REQUIRE_CUDART=1 but %s is missing", debianCudart)
		}
		t.Skip("Debian's libcudart.so.11.0 is not installed here")
	}
}

// mustLoad returns the process's runtime, skipping where no libcudart is installed at all
// (a developer machine without CUDA; CI and GPU hosts always have one).
func mustLoad(t testing.TB) *Runtime {
	t.Helper()
	rt, err := Load()
	if err != nil && !requireCudart && !testgpu.Required() {
		t.Skipf("no libcudart here: %v", err)
	}
	require.NoError(t, err)
	return rt
}

func mustLoadNVRTC(t testing.TB) *NVRTC {
	t.Helper()
	nv, err := LoadNVRTC()
	if err != nil && !requireCudart && !testgpu.Required() {
		t.Skipf("no libnvrtc here: %v", err)
	}
	require.NoError(t, err)
	return nv
}

var gpuProbe = sync.OnceValues(func() (*Runtime, string) {
	rt, err := Load()
	if err != nil {
		return nil, "libcudart does not load: " + err.Error()
	}
	n, err := rt.GetDeviceCount()
	if err != nil {
		return nil, "cudaGetDeviceCount: " + err.Error()
	}
	if n < 1 {
		return nil, "cudaGetDeviceCount found no device"
	}
	return rt, ""
})

// hasGPU reports whether a device is usable, without skipping.
func hasGPU() bool { rt, _ := gpuProbe(); return rt != nil }

// gpuRuntime skips (or, with GPUACTOR_REQUIRE_GPU=1, fails) unless a GPU is usable; otherwise it
// locks the test goroutine to its thread and makes device 0 current and initialized there.
func gpuRuntime(t testing.TB) *Runtime {
	t.Helper()
	rt, why := gpuProbe()
	testgpu.Need(t, rt != nil, why)
	runtime.LockOSThread()
	t.Cleanup(runtime.UnlockOSThread)
	require.NoError(t, rt.SetDevice(0))
	require.NoError(t, rt.InitDevice(0))
	_ = rt.GetLastError() // start clean: the last error belongs to the thread
	return rt
}

const saxpySrc = `
extern "C" __global__ void saxpy(float a, const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

extern "C" __global__ void empty() {}
`

// lockThread locks the calling goroutine to its thread for good: the goroutine's thread exits
// with it, taking its CUDA state along.
func lockThread() { runtime.LockOSThread() }
