package cudart

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/internal/backend"
)

// BenchmarkSyscallStreamQuery is the cost of one trivial binding call on an idle stream: symbol
// lookup, purego.SyscallN and the driver's own work.
func BenchmarkSyscallStreamQuery(b *testing.B) {
	rt := gpuRuntime(b)
	s, err := rt.StreamCreateWithPriority(backend.StreamNonBlocking, 0)
	require.NoError(b, err)
	defer rt.StreamDestroy(s) //nolint:errcheck
	b.ReportAllocs()
	for b.Loop() {
		if err := rt.StreamQuery(s); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDeviceStreamQuery is StreamQuery through the backend adapter (a per-device frame).
func BenchmarkDeviceStreamQuery(b *testing.B) {
	rt := gpuRuntime(b)
	dev, _, s := benchKernel(b, rt, "empty")
	b.ReportAllocs()
	for b.Loop() {
		if err := dev.StreamQuery(s); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSyscallGetLastError is the fixed cost of a binding call into libcudart (no GPU
// needed): the raw call, without error mapping.
func BenchmarkSyscallGetLastError(b *testing.B) {
	rt := mustLoad(b)
	b.ReportAllocs()
	for b.Loop() {
		_, _ = rt.rawCall(fnGetLastError)
	}
}

// BenchmarkLaunchEmpty is the enqueue cost of an empty kernel through the backend adapter,
// synchronizing every 1024 launches.
func BenchmarkLaunchEmpty(b *testing.B) {
	rt := gpuRuntime(b)
	dev, k, s := benchKernel(b, rt, "empty")
	one := backend.Dim3{X: 1, Y: 1, Z: 1}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if err := dev.Launch(k, one, one, 0, s, nil); err != nil {
			b.Fatal(err)
		}
		if i++; i%1024 == 0 {
			require.NoError(b, dev.StreamSynchronize(s))
		}
	}
	require.NoError(b, dev.StreamSynchronize(s))
}

// BenchmarkLaunchSaxpyArgs adds packing four arguments.
func BenchmarkLaunchSaxpyArgs(b *testing.B) {
	rt := gpuRuntime(b)
	dev, k, s := benchKernel(b, rt, "saxpy")
	p, err := dev.Malloc(4 * 256)
	require.NoError(b, err)
	defer dev.Free(p) //nolint:errcheck
	args := []backend.Arg{
		{Kind: backend.ArgFloat32, Bits: uint64(math.Float32bits(1))},
		{Kind: backend.ArgPtr, Bits: uint64(p)},
		{Kind: backend.ArgPtr, Bits: uint64(p)},
		{Kind: backend.ArgInt32, Bits: 256},
	}
	grid, block := backend.Dim3{X: 1, Y: 1, Z: 1}, backend.Dim3{X: 256, Y: 1, Z: 1}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if err := dev.Launch(k, grid, block, 0, s, args); err != nil {
			b.Fatal(err)
		}
		if i++; i%1024 == 0 {
			require.NoError(b, dev.StreamSynchronize(s))
		}
	}
	require.NoError(b, dev.StreamSynchronize(s))
}

// BenchmarkLaunchSync is a launch plus a stream synchronization: the round trip.
func BenchmarkLaunchSync(b *testing.B) {
	rt := gpuRuntime(b)
	dev, k, s := benchKernel(b, rt, "empty")
	one := backend.Dim3{X: 1, Y: 1, Z: 1}
	b.ReportAllocs()
	for b.Loop() {
		if err := dev.Launch(k, one, one, 0, s, nil); err != nil {
			b.Fatal(err)
		}
		if err := dev.StreamSynchronize(s); err != nil {
			b.Fatal(err)
		}
	}
}

func benchKernel(b testing.TB, rt *Runtime, name string) (backend.Device, backend.Kernel, backend.Stream) {
	b.Helper()
	dev, err := NewBackend(rt).Open(0)
	require.NoError(b, err)
	image, kind := compileFor(b, rt, false)
	mod, err := dev.LoadModule(backend.ModuleSpec{Image: image, ImageKind: kind})
	require.NoError(b, err)
	b.Cleanup(func() { _ = dev.UnloadModule(mod) })
	k, err := dev.ModuleKernel(mod, name)
	require.NoError(b, err)
	s, err := dev.StreamCreate(backend.StreamNonBlocking, 0)
	require.NoError(b, err)
	b.Cleanup(func() { _ = dev.StreamDestroy(s) })
	return dev, k, s
}

// BenchmarkLaunchEmptyPaths compares the two kernel paths' enqueue cost on the same cubin: the
// runtime's cudaLaunchKernel with a cudaKernel_t (LibraryAPI) and the driver's cuLaunchKernel
// with a CUfunction (DriverAPI). Which is cheaper decides the default path.
func BenchmarkLaunchEmptyPaths(b *testing.B) {
	for _, path := range []string{"library/cudaLaunchKernel", "library/cuLaunchKernel", "driver/cuLaunchKernel"} {
		api := LibraryAPI
		if strings.HasPrefix(path, "driver") {
			api = DriverAPI
		}
		b.Run(path, func(b *testing.B) {
			rt := gpuRuntime(b)
			if api == LibraryAPI && rt.ModuleAPI() != LibraryAPI {
				b.Skip("runtime has no cudaLibrary API")
			}
			image, kind := compileFor(b, rt, false)
			m, err := rt.LoadModuleWith(api, image, kind)
			require.NoError(b, err)
			b.Cleanup(func() { _ = rt.UnloadModule(m) })
			k, err := rt.ModuleKernel(m, "empty")
			require.NoError(b, err)
			if path == "library/cudaLaunchKernel" {
				k.Func = 0
			}
			s, err := rt.StreamCreateWithPriority(1, 0)
			require.NoError(b, err)
			b.Cleanup(func() { _ = rt.StreamDestroy(s) })
			one := Dim3{X: 1, Y: 1, Z: 1}
			i := 0
			for b.Loop() {
				if err := rt.LaunchKernel(k, one, one, 0, s, nil); err != nil {
					b.Fatal(err)
				}
				if i++; i%1024 == 0 {
					require.NoError(b, rt.StreamSynchronize(s))
				}
			}
			require.NoError(b, rt.StreamSynchronize(s))
		})
	}
}
