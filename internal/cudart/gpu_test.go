package cudart

import (
	"fmt"
	"math"
	"regexp"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// GPU tests: they skip without a usable device (fail with GPUACTOR_REQUIRE_GPU=1) and run on
// device 0, current on the test's locked thread.

func TestGPUDeviceQuery(t *testing.T) {
	rt := gpuRuntime(t)
	n, err := rt.GetDeviceCount()
	require.NoError(t, err)
	assert.GreaterOrEqual(t, n, 1)

	dev, err := rt.GetDevice()
	require.NoError(t, err)
	assert.Equal(t, 0, dev)

	name, err := rt.DeviceName(0)
	require.NoError(t, err)
	assert.NotEmpty(t, name)

	ccMajor, err := rt.DeviceGetAttribute(backend.AttrComputeCapabilityMajor, 0)
	require.NoError(t, err)
	ccMinor, err := rt.DeviceGetAttribute(backend.AttrComputeCapabilityMinor, 0)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, ccMajor, 5)
	warp, err := rt.DeviceGetAttribute(backend.AttrWarpSize, 0)
	require.NoError(t, err)
	assert.Equal(t, 32, warp)
	sms, err := rt.DeviceGetAttribute(backend.AttrMultiProcessorCount, 0)
	require.NoError(t, err)
	assert.Positive(t, sms)
	maxThreads, err := rt.DeviceGetAttribute(backend.AttrMaxThreadsPerBlock, 0)
	require.NoError(t, err)
	assert.Equal(t, 1024, maxThreads)
	_, err = rt.DeviceGetAttribute(backend.Attr(-5), 0)
	assert.ErrorIs(t, err, cudaerr.InvalidValue)
	_, err = rt.DeviceGetAttribute(backend.AttrWarpSize, n+100)
	assert.ErrorIs(t, err, cudaerr.InvalidDevice)
	_ = rt.GetLastError()

	bus, err := rt.DeviceGetPCIBusID(0)
	require.NoError(t, err)
	assert.Regexp(t, regexp.MustCompile(`^[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-9a-fA-F]$`), bus)

	free, total, err := rt.MemGetInfo()
	require.NoError(t, err)
	assert.Greater(t, total, uint64(1<<30))
	assert.LessOrEqual(t, free, total)

	least, greatest, err := rt.DeviceGetStreamPriorityRange()
	require.NoError(t, err)
	assert.LessOrEqual(t, greatest, least)

	rv, err := rt.RuntimeVersion()
	require.NoError(t, err)
	assert.Equal(t, rt.Major(), rv/1000)
	assert.Equal(t, int64(rv), rt.callVer.Load(), "with a driver the runtime answers itself")
	dv, err := rt.DriverVersion()
	require.NoError(t, err)
	assert.GreaterOrEqual(t, dv, rv, "the driver supports the runtime")
	t.Logf("%s (sm_%d%d, %d SMs, %s) bus %s, %d/%d MiB free, priorities %d..%d, runtime %s (%s), driver %s, modules via %s",
		name, ccMajor, ccMinor, sms, rt.Path(), bus, free>>20, total>>20, least, greatest,
		FormatVersion(rv), rt.Path(), FormatVersion(dv), rt.ModuleAPI())
}

func TestGPUMemoryRoundTrip(t *testing.T) {
	rt := gpuRuntime(t)
	const n = 1 << 20
	src := make([]byte, n)
	for i := range src {
		src[i] = byte(i * 7)
	}
	d1, err := rt.Malloc(n)
	require.NoError(t, err)
	defer rt.Free(d1) //nolint:errcheck
	d2, err := rt.Malloc(n)
	require.NoError(t, err)
	defer rt.Free(d2) //nolint:errcheck

	// Synchronous copies from and to Go memory.
	require.NoError(t, rt.Memcpy(uintptr(d1), uintptr(unsafe.Pointer(&src[0])), n, MemcpyHostToDevice))
	require.NoError(t, rt.Memcpy(uintptr(d2), uintptr(d1), n, MemcpyDeviceToDevice))
	require.NoError(t, rt.Memset(d2, 0xAB, 4096))
	back := make([]byte, n)
	require.NoError(t, rt.Memcpy(uintptr(unsafe.Pointer(&back[0])), uintptr(d2), n, MemcpyDeviceToHost))
	assert.Equal(t, bytes4096(0xAB), back[:4096])
	assert.Equal(t, src[4096:], back[4096:])

	// Asynchronous copies through pinned memory on a stream.
	s, err := rt.StreamCreateWithPriority(backend.StreamNonBlocking, 0)
	require.NoError(t, err)
	defer rt.StreamDestroy(s) //nolint:errcheck
	pinned, err := rt.HostAlloc(n, backend.HostAllocDefault)
	require.NoError(t, err)
	defer rt.FreeHost(pinned) //nolint:errcheck
	pb := unsafe.Slice((*byte)(pinned), n)
	require.NoError(t, rt.MemsetAsync(d1, 0x5C, n, s))
	require.NoError(t, rt.MemcpyAsync(uintptr(pinned), uintptr(d1), n, MemcpyDeviceToHost, s))
	require.NoError(t, rt.StreamSynchronize(s))
	assert.Equal(t, -1, slices.IndexFunc(pb, func(b byte) bool { return b != 0x5C }))

	// Registered Go memory.
	reg := make([]byte, n)
	require.NoError(t, rt.HostRegister(unsafe.Pointer(&reg[0]), n, backend.HostRegisterDefault))
	require.NoError(t, rt.MemcpyAsync(uintptr(unsafe.Pointer(&reg[0])), uintptr(d2), n, MemcpyDeviceToHost, s))
	require.NoError(t, rt.StreamSynchronize(s))
	require.NoError(t, rt.HostUnregister(unsafe.Pointer(&reg[0])))
	assert.Equal(t, back, reg)
	err = rt.HostUnregister(unsafe.Pointer(&reg[0]))
	assert.ErrorIs(t, err, cudaerr.HostMemoryNotRegistered)
	require.ErrorIs(t, rt.GetLastError(), cudaerr.HostMemoryNotRegistered)
	require.NoError(t, rt.GetLastError())
}

func bytes4096(v byte) []byte {
	b := make([]byte, 4096)
	for i := range b {
		b[i] = v
	}
	return b
}

func TestGPUStreamsAndEvents(t *testing.T) {
	rt := gpuRuntime(t)
	least, greatest, err := rt.DeviceGetStreamPriorityRange()
	require.NoError(t, err)
	hi, err := rt.StreamCreateWithPriority(backend.StreamNonBlocking, greatest)
	require.NoError(t, err)
	lo, err := rt.StreamCreateWithPriority(backend.StreamNonBlocking, least)
	require.NoError(t, err)
	start, err := rt.EventCreateWithFlags(backend.EventDefault)
	require.NoError(t, err)
	end, err := rt.EventCreateWithFlags(backend.EventDefault)
	require.NoError(t, err)
	noTiming, err := rt.EventCreateWithFlags(backend.EventDisableTiming)
	require.NoError(t, err)

	const n = 256 << 20
	buf, err := rt.Malloc(n)
	require.NoError(t, err)
	require.NoError(t, rt.EventRecord(start, hi))
	for i := range 8 {
		require.NoError(t, rt.MemsetAsync(buf, byte(i), n, hi))
	}
	require.NoError(t, rt.EventRecord(end, hi))
	err = rt.StreamQuery(hi)
	if err != nil {
		assert.ErrorIs(t, err, cudaerr.NotReady, "2 GiB of memset is still running, or done")
		assert.Same(t, rt.notReadyStream, err)
	}
	// lo waits for hi's work, then overwrites the first byte.
	require.NoError(t, rt.StreamWaitEvent(lo, end))
	require.NoError(t, rt.MemsetAsync(buf, 0xEE, 1, lo))
	require.NoError(t, rt.EventRecord(noTiming, lo))
	require.NoError(t, rt.EventSynchronize(noTiming))
	require.NoError(t, rt.EventQuery(end), "lo waited for end")
	require.NoError(t, rt.EventQuery(noTiming))
	require.NoError(t, rt.StreamQuery(lo))
	require.NoError(t, rt.StreamSynchronize(hi))
	var first [2]byte
	require.NoError(t, rt.Memcpy(uintptr(unsafe.Pointer(&first[0])), uintptr(buf), 2, MemcpyDeviceToHost))
	assert.Equal(t, [2]byte{0xEE, 7}, first)

	ms, err := rt.EventElapsedTime(start, end)
	require.NoError(t, err)
	assert.Greater(t, ms, float32(0))
	t.Logf("2 GiB of memset: %.3f ms (%.0f GB/s)", ms, float64(8*n)/float64(ms)/1e6)
	_, err = rt.EventElapsedTime(start, noTiming)
	assert.ErrorIs(t, err, cudaerr.InvalidResourceHandle, "an event without timing")
	_ = rt.GetLastError()

	require.NoError(t, rt.DeviceSynchronize())
	require.NoError(t, rt.Free(buf))
	for _, e := range []Event{start, end, noTiming} {
		require.NoError(t, rt.EventDestroy(e))
	}
	require.NoError(t, rt.StreamDestroy(hi))
	require.NoError(t, rt.StreamDestroy(lo))
}

func TestGPUHostFunc(t *testing.T) {
	rt := gpuRuntime(t)
	s, err := rt.StreamCreateWithPriority(backend.StreamNonBlocking, 0)
	require.NoError(t, err)
	defer rt.StreamDestroy(s) //nolint:errcheck
	buf, err := rt.Malloc(64 << 20)
	require.NoError(t, err)
	defer rt.Free(buf) //nolint:errcheck

	before := hostFuncs.pending()
	order := make(chan int, 100)
	for i := range 100 {
		require.NoError(t, rt.MemsetAsync(buf, byte(i), 64<<20, s))
		require.NoError(t, rt.LaunchHostFunc(s, func() { order <- i }))
	}
	require.NoError(t, rt.StreamSynchronize(s))
	for i := range 100 {
		assert.Equal(t, i, <-order, "host functions run in stream order")
	}
	assert.Equal(t, before, hostFuncs.pending(), "every handle was released")
}

// compileFor compiles the test kernels for the current device: a cubin for sm_XX when NVRTC
// supports the architecture, else PTX for the newest architecture it supports below it.
func compileFor(t testing.TB, rt *Runtime, ptx bool) ([]byte, backend.ImageKind) {
	t.Helper()
	nv := mustLoadNVRTC(t)
	maj, err := rt.DeviceGetAttribute(backend.AttrComputeCapabilityMajor, 0)
	require.NoError(t, err)
	mnr, err := rt.DeviceGetAttribute(backend.AttrComputeCapabilityMinor, 0)
	require.NoError(t, err)
	arch := maj*10 + mnr
	archs, err := nv.SupportedArchs()
	require.NoError(t, err)
	if !slices.Contains(archs, arch) {
		ptx = true
		for _, a := range archs {
			if a <= arch {
				arch = a
			}
		}
	}
	if ptx {
		prog, err := nv.Compile(saxpySrc, "saxpy.cu", []string{fmt.Sprintf("--gpu-architecture=compute_%d", arch)})
		require.NoError(t, err)
		return prog.PTX, backend.ImagePTX
	}
	prog, err := nv.Compile(saxpySrc, "saxpy.cu", []string{fmt.Sprintf("--gpu-architecture=sm_%d", arch)})
	require.NoError(t, err)
	return prog.Cubin, backend.ImageCubin
}

// moduleAPIs are the loading paths the runtime offers: the driver API always, the library API
// from 12.8.
func moduleAPIs(rt *Runtime) []ModuleAPI {
	if rt.ModuleAPI() == LibraryAPI {
		return []ModuleAPI{LibraryAPI, DriverAPI}
	}
	return []ModuleAPI{DriverAPI}
}

// saxpyRun launches saxpy over n elements and checks every one.
func saxpyRun(t testing.TB, rt *Runtime, k Kernel, s Stream, n int) {
	t.Helper()
	x := make([]float32, n)
	y := make([]float32, n)
	for i := range n {
		x[i] = float32(i % 1024)
		y[i] = float32(2 * (i % 512))
	}
	const a = float32(2)
	size := uint64(4 * n)
	dx, err := rt.Malloc(size)
	require.NoError(t, err)
	defer rt.Free(dx) //nolint:errcheck
	dy, err := rt.Malloc(size)
	require.NoError(t, err)
	defer rt.Free(dy) //nolint:errcheck
	// On s, not with the synchronous cudaMemcpy: from pageable memory that returns once the data
	// is staged, before the DMA lands, and s (non-blocking) would not wait for the legacy stream.
	require.NoError(t, rt.MemcpyAsync(uintptr(dx), uintptr(unsafe.Pointer(&x[0])), size, MemcpyHostToDevice, s))
	require.NoError(t, rt.MemcpyAsync(uintptr(dy), uintptr(unsafe.Pointer(&y[0])), size, MemcpyHostToDevice, s))

	var args KernelArgs
	args.Add(uint64(math.Float32bits(a)))
	args.Add(uint64(dx))
	args.Add(uint64(dy))
	args.Add(uint64(uint32(int32(n))))
	grid := Dim3{X: uint32((n + 255) / 256), Y: 1, Z: 1}
	block := Dim3{X: 256, Y: 1, Z: 1}
	require.NoError(t, rt.LaunchKernel(k, grid, block, 0, s, args.Pointers()))
	require.NoError(t, rt.StreamSynchronize(s))

	out := make([]float32, n)
	require.NoError(t, rt.Memcpy(uintptr(unsafe.Pointer(&out[0])), uintptr(dy), size, MemcpyDeviceToHost))
	bad := 0
	for i := range n {
		if want := a*x[i] + y[i]; out[i] != want {
			if bad < 5 {
				t.Errorf("y[%d] = %v, want %v", i, out[i], want)
			}
			bad++
		}
	}
	require.Zero(t, bad, "%d of %d elements wrong", bad, n)
}

func TestGPUSaxpy(t *testing.T) {
	rt := gpuRuntime(t)
	s, err := rt.StreamCreateWithPriority(backend.StreamNonBlocking, 0)
	require.NoError(t, err)
	defer rt.StreamDestroy(s) //nolint:errcheck
	for _, api := range moduleAPIs(rt) {
		for _, ptx := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/ptx=%v", api, ptx), func(t *testing.T) {
				rt := gpuRuntime(t) // a subtest runs on a goroutine, and so a thread, of its own
				image, kind := compileFor(t, rt, ptx)
				mod, err := rt.LoadModuleWith(api, image, kind)
				require.NoError(t, err)
				assert.Equal(t, api, mod.API)
				k, err := rt.ModuleKernel(mod, "saxpy")
				require.NoError(t, err)
				assert.Equal(t, api, k.API)
				_, err = rt.ModuleKernel(mod, "no_such_kernel")
				require.Error(t, err)
				t.Logf("missing kernel: %v", err)
				_ = rt.GetLastError()

				assert.NotZero(t, k.Func, "the kernel's CUfunction, launched through the driver")
				saxpyRun(t, rt, k, s, 1<<20+3)
				if api == LibraryAPI {
					runtimePath := k
					runtimePath.Func = 0 // through cudaLaunchKernel with the cudaKernel_t
					saxpyRun(t, rt, runtimePath, s, 1<<20+3)
				}
				require.NoError(t, rt.UnloadModule(mod))
			})
		}
	}
}

func TestGPULaunchBadConfigRecovers(t *testing.T) {
	rt := gpuRuntime(t)
	s, err := rt.StreamCreateWithPriority(backend.StreamNonBlocking, 0)
	require.NoError(t, err)
	defer rt.StreamDestroy(s) //nolint:errcheck
	image, kind := compileFor(t, rt, false)
	for _, api := range moduleAPIs(rt) {
		t.Run(api.String(), func(t *testing.T) {
			rt := gpuRuntime(t)
			mod, err := rt.LoadModuleWith(api, image, kind)
			require.NoError(t, err)
			defer rt.UnloadModule(mod) //nolint:errcheck
			k, err := rt.ModuleKernel(mod, "saxpy")
			require.NoError(t, err)

			var args KernelArgs
			for range 4 {
				args.Add(0)
			}
			for _, bad := range []struct{ grid, block Dim3 }{
				{Dim3{X: 1, Y: 1, Z: 1}, Dim3{X: 2048, Y: 1, Z: 1}}, // too many threads per block
				{Dim3{X: 0, Y: 1, Z: 1}, Dim3{X: 32, Y: 1, Z: 1}},   // empty grid
			} {
				err = rt.LaunchKernel(k, bad.grid, bad.block, 0, s, args.Pointers())
				require.Error(t, err)
				assert.ErrorIs(t, err, cudaerr.InvalidConfiguration)
				assert.False(t, cudaerr.IsSticky(err))
				t.Logf("grid %v block %v: %v", bad.grid, bad.block, err)
			}
			_ = rt.GetLastError()
			require.NoError(t, rt.GetLastError(), "the error was not sticky")
			saxpyRun(t, rt, k, s, 4099)
		})
	}
}

func TestGPUHugeMallocRecovers(t *testing.T) {
	rt := gpuRuntime(t)
	_, err := rt.Malloc(1 << 50)
	require.Error(t, err)
	assert.ErrorIs(t, err, cudaerr.MemoryAllocation)
	var ce *cudaerr.Error
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "cudaMalloc", ce.Op)
	assert.Equal(t, "out of memory", ce.Message)
	_ = rt.GetLastError()
	p, err := rt.Malloc(1 << 20)
	require.NoError(t, err)
	require.NoError(t, rt.Memset(p, 1, 1<<20))
	require.NoError(t, rt.Free(p))
	require.NoError(t, rt.GetLastError())
}

// The whole backend.Device surface, as the device actor uses it.
func TestGPUBackendDevice(t *testing.T) {
	rt := gpuRuntime(t)
	var b backend.Backend = NewBackend(rt)
	n, err := b.DeviceCount()
	require.NoError(t, err)
	require.GreaterOrEqual(t, n, 1)
	_, err = b.Open(n + 7)
	assert.ErrorIs(t, err, cudaerr.InvalidDevice)
	assert.ErrorIs(t, rt.GetLastError(), cudaerr.InvalidDevice, "the failure is the thread's last error")
	dev, err := b.Open(0)
	require.NoError(t, err)
	assert.Equal(t, 0, dev.Ordinal())
	name, err := dev.Name()
	require.NoError(t, err)
	assert.NotEmpty(t, name)
	cc, err := dev.Attribute(backend.AttrComputeCapabilityMajor)
	require.NoError(t, err)
	assert.Positive(t, cc)
	_, err = dev.PCIBusID()
	require.NoError(t, err)
	free, total, err := dev.MemInfo()
	require.NoError(t, err)
	assert.LessOrEqual(t, free, total)
	least, greatest, err := dev.StreamPriorityRange()
	require.NoError(t, err)

	s, err := dev.StreamCreate(backend.StreamNonBlocking, greatest)
	require.NoError(t, err)
	s2, err := dev.StreamCreate(backend.StreamNonBlocking, least)
	require.NoError(t, err)
	e0, err := dev.EventCreate(backend.EventDefault)
	require.NoError(t, err)
	e1, err := dev.EventCreate(backend.EventDefault)
	require.NoError(t, err)

	image, kind := compileFor(t, rt, false)
	mod, err := dev.LoadModule(backend.ModuleSpec{Image: image, ImageKind: kind})
	require.NoError(t, err)
	k, err := dev.ModuleKernel(mod, "saxpy")
	require.NoError(t, err)

	const count = 100_003
	size := uint64(4 * count)
	hx, err := dev.HostAlloc(size, backend.HostAllocDefault)
	require.NoError(t, err)
	hy, err := dev.HostAlloc(size, backend.HostAllocDefault)
	require.NoError(t, err)
	xs := unsafe.Slice((*float32)(hx), count)
	ys := unsafe.Slice((*float32)(hy), count)
	for i := range count {
		xs[i] = float32(i % 1000)
		ys[i] = 1
	}
	dx, err := dev.Malloc(size)
	require.NoError(t, err)
	dy, err := dev.Malloc(size)
	require.NoError(t, err)
	dz, err := dev.Malloc(size)
	require.NoError(t, err)

	require.NoError(t, dev.EventRecord(e0, s))
	require.NoError(t, dev.CopyHtoD(dx, hx, size, s))
	require.NoError(t, dev.Memset(dy, 0, size, s))
	require.NoError(t, dev.CopyHtoD(dy, hy, size, s))
	args := []backend.Arg{
		{Kind: backend.ArgFloat32, Bits: uint64(math.Float32bits(3))},
		{Kind: backend.ArgPtr, Bits: uint64(dx)},
		{Kind: backend.ArgPtr, Bits: uint64(dy)},
		{Kind: backend.ArgInt32, Bits: count},
	}
	one := backend.Dim3{X: 1, Y: 1, Z: 1}
	require.NoError(t, dev.Launch(k, backend.Dim3{X: (count + 127) / 128, Y: 1, Z: 1}, backend.Dim3{X: 128, Y: 1, Z: 1}, 0, s, args))
	require.NoError(t, dev.EventRecord(e1, s))
	// s2 copies the result once s's event says it is ready.
	require.NoError(t, dev.StreamWaitEvent(s2, e1))
	require.NoError(t, dev.CopyDtoD(dz, dy, size, s2))
	require.NoError(t, dev.CopyDtoH(hy, dz, size, s2))
	done := make(chan struct{})
	require.NoError(t, dev.LaunchHostFunc(s2, func() { close(done) }))
	require.NoError(t, dev.StreamSynchronize(s2))
	<-done
	require.NoError(t, dev.StreamQuery(s2))
	require.NoError(t, dev.EventQuery(e1))
	require.NoError(t, dev.EventSynchronize(e1))
	ms, err := dev.EventElapsed(e0, e1)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, ms, float32(0))
	for i := range count {
		if want := 3*float32(i%1000) + 1; ys[i] != want {
			t.Fatalf("y[%d] = %v, want %v", i, ys[i], want)
		}
	}

	require.NoError(t, dev.Synchronize())
	require.NoError(t, dev.LastError())
	require.NoError(t, dev.UnloadModule(mod))
	err = dev.Launch(k, one, one, 0, s, args)
	assert.ErrorIs(t, err, cudaerr.InvalidResourceHandle, "kernels die with their module")

	for _, p := range []backend.DevicePtr{dx, dy, dz} {
		require.NoError(t, dev.Free(p))
	}
	require.NoError(t, dev.HostFree(hx))
	require.NoError(t, dev.HostFree(hy))
	require.NoError(t, dev.EventDestroy(e0))
	require.NoError(t, dev.EventDestroy(e1))
	require.NoError(t, dev.StreamDestroy(s))
	require.NoError(t, dev.StreamDestroy(s2))

	// HostRegister through the adapter.
	reg := make([]byte, 1<<16)
	require.NoError(t, dev.HostRegister(unsafe.Pointer(&reg[0]), uint64(len(reg)), backend.HostRegisterDefault))
	require.NoError(t, dev.HostUnregister(unsafe.Pointer(&reg[0])))
}

// Several device threads use one Runtime at once (symbols, error texts, host functions).
func TestGPUConcurrentThreads(t *testing.T) {
	rt := gpuRuntime(t)
	b := NewBackend(rt)
	image, kind := compileFor(t, rt, false)
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			errs <- func() error {
				lockThread()
				dev, err := b.Open(0)
				if err != nil {
					return err
				}
				s, err := dev.StreamCreate(backend.StreamNonBlocking, 0)
				if err != nil {
					return err
				}
				defer dev.StreamDestroy(s) //nolint:errcheck
				mod, err := dev.LoadModule(backend.ModuleSpec{Image: image, ImageKind: kind})
				if err != nil {
					return err
				}
				defer dev.UnloadModule(mod) //nolint:errcheck
				k, err := dev.ModuleKernel(mod, "empty")
				if err != nil {
					return err
				}
				one := backend.Dim3{X: 1, Y: 1, Z: 1}
				var ran atomic.Int32
				for range 200 {
					if err := dev.Launch(k, one, one, 0, s, nil); err != nil {
						return err
					}
					if err := dev.LaunchHostFunc(s, func() { ran.Add(1) }); err != nil {
						return err
					}
					_ = dev.StreamQuery(s)
				}
				if err := dev.StreamSynchronize(s); err != nil {
					return err
				}
				if n := ran.Load(); n != 200 {
					return fmt.Errorf("%d host functions ran, want 200", n)
				}
				return nil
			}()
		}()
	}
	for range 4 {
		require.NoError(t, <-errs)
	}
}

// The adapter's hot calls allocate nothing.
func TestGPUHotCallsDoNotAllocate(t *testing.T) {
	rt := gpuRuntime(t)
	if raceEnabled {
		t.Skip("the race detector's instrumentation allocates")
	}
	dev, k, s := benchKernel(t, rt, "saxpy")
	e, err := dev.EventCreate(backend.EventDisableTiming)
	require.NoError(t, err)
	defer dev.EventDestroy(e) //nolint:errcheck
	p, err := dev.Malloc(4 * 256)
	require.NoError(t, err)
	defer dev.Free(p) //nolint:errcheck
	pinned, err := dev.HostAlloc(4*256, backend.HostAllocDefault)
	require.NoError(t, err)
	defer dev.HostFree(pinned) //nolint:errcheck
	args := []backend.Arg{
		{Kind: backend.ArgFloat32, Bits: uint64(math.Float32bits(1))},
		{Kind: backend.ArgPtr, Bits: uint64(p)},
		{Kind: backend.ArgPtr, Bits: uint64(p)},
		{Kind: backend.ArgInt32, Bits: 256},
	}
	grid, block := backend.Dim3{X: 1, Y: 1, Z: 1}, backend.Dim3{X: 256, Y: 1, Z: 1}
	allocs := testing.AllocsPerRun(200, func() {
		_ = dev.Memset(p, 0, 4*256, s)
		_ = dev.CopyHtoD(p, pinned, 4*256, s)
		_ = dev.Launch(k, grid, block, 0, s, args)
		_ = dev.EventRecord(e, s)
		_ = dev.StreamWaitEvent(s, e)
		_ = dev.CopyDtoH(pinned, p, 4*256, s)
		_ = dev.EventQuery(e)
		_ = dev.StreamQuery(s)
		_ = dev.StreamSynchronize(s)
		_ = dev.EventSynchronize(e)
	})
	assert.Zero(t, allocs)
	require.NoError(t, dev.StreamSynchronize(s))
	require.NoError(t, dev.EventQuery(e))
}

// The driver API loads into the thread's current context; a thread that made no runtime call
// has none until LoadModuleWith binds the current device's primary context.
func TestGPUDriverModuleOnFreshThread(t *testing.T) {
	rt := gpuRuntime(t)
	image, kind := compileFor(t, rt, false)
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
			errs <- func() error {
				mod, err := rt.LoadModuleWith(DriverAPI, image, kind)
				if err != nil {
					return err
				}
				if _, err := rt.ModuleKernel(mod, "saxpy"); err != nil {
					return err
				}
				return rt.UnloadModule(mod)
			}()
		}()
	}
	for range 8 {
		require.NoError(t, <-errs)
	}
}
