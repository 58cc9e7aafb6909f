//go:build linux && (amd64 || arm64)

package remote_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/cudart"
	"github.com/gpuactor/gpuactor/internal/remote"
	"github.com/gpuactor/gpuactor/internal/testgpu"
	"github.com/gpuactor/gpuactor/internal/worker"
)

const saxpySrc = `
extern "C" __global__ void saxpy(float a, const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
`

// openGPU starts a worker serving the CUDA runtime and opens its device 0; it skips (fails
// with GPUACTOR_REQUIRE_GPU=1) when the worker finds no usable GPU. The parent never loads
// the runtime: everything CUDA happens in the worker.
func openGPU(t *testing.T) (*remote.Backend, *remote.Device) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	be, err := remote.New(ctx, func(ctx context.Context) (*worker.Process, error) {
		return remote.Start(ctx, worker.WithEnv(backendVar+"=cudart"))
	})
	if err != nil {
		testgpu.Need(t, false, "a worker with the CUDA runtime did not start: "+err.Error())
	}
	t.Cleanup(func() { _ = be.Close() })
	n, err := be.DeviceCount()
	testgpu.Need(t, err == nil && n > 0, fmt.Sprintf("the worker's runtime found no device (%d, %v)", n, err))
	dv, err := be.Open(0)
	require.NoError(t, err)
	return be, dv.(*remote.Device)
}

// TestGPUSaxpyInTheWorker compiles saxpy in the parent (NVRTC needs no GPU), and loads,
// launches and verifies it on an isolated device, with its data through shared host memory.
func TestGPUSaxpyInTheWorker(t *testing.T) {
	_, dv := openGPU(t)
	maj, err := dv.Attribute(backend.AttrComputeCapabilityMajor)
	require.NoError(t, err)
	mnr, err := dv.Attribute(backend.AttrComputeCapabilityMinor)
	require.NoError(t, err)
	nv, err := cudart.LoadNVRTC()
	require.NoError(t, err)
	archs, err := nv.SupportedArchs()
	require.NoError(t, err)
	arch := 0
	for _, a := range archs {
		if a <= maj*10+mnr {
			arch = a
		}
	}
	require.NotZero(t, arch, "NVRTC supports no architecture at or below the device's")
	prog, err := nv.Compile(saxpySrc, "saxpy.cu", []string{fmt.Sprintf("--gpu-architecture=compute_%d", arch)})
	require.NoError(t, err)

	mod, err := dv.LoadModule(backend.ModuleSpec{Image: prog.PTX, ImageKind: backend.ImagePTX})
	require.NoError(t, err)
	k, err := dv.ModuleKernel(mod, "saxpy")
	require.NoError(t, err)

	const n = 1 << 20
	hp, err := dv.HostAlloc(2*n*4, backend.HostAllocPortable)
	require.NoError(t, err)
	host := unsafe.Slice((*float32)(hp), 2*n)
	for i := range n {
		host[i] = float32(i)         // x
		host[n+i] = float32(2*i + 1) // y
	}
	s, err := dv.StreamCreate(backend.StreamNonBlocking, 0)
	require.NoError(t, err)
	dx, err := dv.Malloc(n * 4)
	require.NoError(t, err)
	dy, err := dv.Malloc(n * 4)
	require.NoError(t, err)
	require.NoError(t, dv.CopyHtoD(dx, hp, n*4, s))
	require.NoError(t, dv.CopyHtoD(dy, unsafe.Add(hp, n*4), n*4, s))
	const a = 3
	args := []backend.Arg{
		{Kind: backend.ArgFloat32, Bits: uint64(math.Float32bits(a))},
		{Kind: backend.ArgPtr, Bits: uint64(dx)},
		{Kind: backend.ArgPtr, Bits: uint64(dy)},
		{Kind: backend.ArgInt32, Bits: uint64(uint32(n))},
	}
	require.NoError(t, dv.Launch(k, backend.Dim3{X: n / 256, Y: 1, Z: 1}, backend.Dim3{X: 256, Y: 1, Z: 1}, 0, s, args))
	require.NoError(t, dv.CopyDtoH(unsafe.Add(hp, n*4), dy, n*4, s))
	require.NoError(t, dv.StreamSynchronize(s))
	for i := range n {
		if want := a*float32(i) + float32(2*i+1); host[n+i] != want {
			t.Fatalf("y[%d] = %v, want %v", i, host[n+i], want)
		}
	}
	require.NoError(t, dv.Free(dx))
	require.NoError(t, dv.Free(dy))
	require.NoError(t, dv.StreamDestroy(s))
	require.NoError(t, dv.UnloadModule(mod))
	require.NoError(t, dv.HostFree(hp))
}

// TestGPUKilledWorkerLeavesTheGPUUsable kills (SIGKILL) a worker holding device memory; a
// fresh worker then opens the same GPU and works.
func TestGPUKilledWorkerLeavesTheGPUUsable(t *testing.T) {
	be, dv := openGPU(t)
	_, err := dv.Malloc(1 << 20)
	require.NoError(t, err)
	require.NoError(t, syscall.Kill(be.Process().Pid(), syscall.SIGKILL))
	<-be.Process().Done()
	_, err = dv.Malloc(1 << 20)
	require.ErrorIs(t, err, worker.ErrWorkerDied)
	// The backend's watcher fails Health once it sees the worker gone: soon, not at once.
	require.Eventually(t, func() bool { return errors.Is(be.Health(0).Err(), worker.ErrWorkerDied) }, 5*time.Second, time.Millisecond)

	_, dv2 := openGPU(t)
	p, err := dv2.Malloc(1 << 20)
	require.NoError(t, err)
	require.NoError(t, dv2.Memset(p, 1, 1<<20, 0))
	require.NoError(t, dv2.Synchronize())
	require.NoError(t, dv2.Free(p))
}

// BenchmarkGPUStreamQuery is one small call's round trip to a worker serving the CUDA
// runtime: the remote figure to set beside the in-process cudart one.
func BenchmarkGPUStreamQuery(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	be, err := remote.New(ctx, func(ctx context.Context) (*worker.Process, error) {
		return remote.Start(ctx, worker.WithEnv(backendVar+"=cudart"))
	})
	if err != nil {
		testgpu.Need(b, false, "a worker with the CUDA runtime did not start: "+err.Error())
	}
	defer be.Close()
	n, err := be.DeviceCount()
	testgpu.Need(b, err == nil && n > 0, fmt.Sprintf("the worker's runtime found no device (%d, %v)", n, err))
	dv, err := be.Open(0)
	require.NoError(b, err)
	s, err := dv.StreamCreate(backend.StreamNonBlocking, 0)
	require.NoError(b, err)
	b.ReportAllocs()
	for b.Loop() {
		if err := dv.StreamQuery(s); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	require.NoError(b, dv.StreamDestroy(s))
}
