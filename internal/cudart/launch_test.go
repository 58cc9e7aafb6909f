package cudart

import (
	"errors"
	"math"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

func TestKernelArgs(t *testing.T) {
	var a KernelArgs
	assert.Nil(t, a.Pointers())
	a.Add(uint64(math.Float32bits(2.5)))
	a.Add(0xdeadbeef00)
	minus7 := int32(-7)
	a.Add(uint64(uint32(minus7)))
	for i := range 20 { // force the storage to grow after pointers were taken once
		if i == 0 {
			a.Pointers()
		}
		a.Add(uint64(i))
	}
	ptrs := a.Pointers()
	require.Len(t, ptrs, 23)
	assert.Equal(t, float32(2.5), *(*float32)(ptrs[0]), "a 4-byte parameter is the low half of its word")
	assert.Equal(t, uint64(0xdeadbeef00), *(*uint64)(ptrs[1]))
	assert.Equal(t, int32(-7), *(*int32)(ptrs[2]))
	assert.Equal(t, uint64(19), *(*uint64)(ptrs[22]))
	for i := range ptrs {
		assert.Equal(t, unsafe.Pointer(&a.words[i]), ptrs[i])
	}
	a.Reset()
	assert.Zero(t, a.Len())
	assert.Nil(t, a.Pointers())
}

func TestArgBits(t *testing.T) {
	assert.Equal(t, uint64(0xFFFFFFFF), argBits(backend.Arg{Kind: backend.ArgInt32, Bits: 0xFFFFFFFFFFFFFFFF}))
	assert.Equal(t, uint64(math.Float32bits(1.5)), argBits(backend.Arg{Kind: backend.ArgFloat32, Bits: uint64(math.Float32bits(1.5)) | 1<<40}))
	assert.Equal(t, uint64(1<<40|5), argBits(backend.Arg{Kind: backend.ArgPtr, Bits: 1<<40 | 5}))
	assert.Equal(t, math.Float64bits(-2), argBits(backend.Arg{Kind: backend.ArgFloat64, Bits: math.Float64bits(-2)}))
}

func TestModuleImage(t *testing.T) {
	ptx := []byte(".version 7.8\n.target sm_80\n")
	img := moduleImage(ptx, 0)
	assert.Equal(t, append(append([]byte{}, ptx...), 0), img, "PTX gets a NUL")
	assert.Equal(t, byte('\n'), ptx[len(ptx)-1], "the caller's slice is not modified")
	terminated := append(append([]byte{}, ptx...), 0)
	assert.Equal(t, terminated, moduleImage(terminated, backend.ImagePTX))

	elf := []byte("\x7fELF\x02\x01\x01rest")
	assert.Equal(t, elf, moduleImage(elf, 0), "cubins are passed as they are")
	fatbin := []byte{0x50, 0xED, 0x55, 0xBA, 1, 0}
	assert.Equal(t, fatbin, moduleImage(fatbin, 0))
	assert.Equal(t, elf, moduleImage(elf, backend.ImageCubin))
	assert.Nil(t, moduleImage(nil, backend.ImagePTX))
}

func TestModuleAPIString(t *testing.T) {
	assert.Equal(t, "library", LibraryAPI.String())
	assert.Equal(t, "driver", DriverAPI.String())
	assert.Equal(t, "ModuleAPI(9)", ModuleAPI(9).String())
}

func TestLoadModuleRejectsBadInput(t *testing.T) {
	rt := mustLoad(t)
	_, err := rt.LoadModule(nil, 0)
	assert.ErrorIs(t, err, cudaerr.InvalidValue)
	_, err = rt.LoadModuleWith(ModuleAPI(9), []byte("x"), 0)
	assert.ErrorIs(t, err, cudaerr.InvalidValue)
	_, err = rt.ModuleKernel(Module{Handle: 1, API: 0}, "k")
	assert.ErrorIs(t, err, cudaerr.InvalidResourceHandle)
	assert.ErrorIs(t, rt.UnloadModule(Module{}), cudaerr.InvalidResourceHandle)
	assert.ErrorIs(t, rt.LaunchKernel(Kernel{}, backend.Dim3{X: 1, Y: 1, Z: 1}, backend.Dim3{X: 1, Y: 1, Z: 1}, 0, 0, nil),
		cudaerr.InvalidResourceHandle)
}

// Without a driver, the driver-API path fails with the runtime's error, not a panic.
func TestDriverPathWithoutGPU(t *testing.T) {
	if hasGPU() {
		t.Skip("a GPU is usable here")
	}
	rt := mustLoad(t)
	_, err := rt.LoadModuleWith(DriverAPI, []byte(".version 7.8\n"), 0)
	require.Error(t, err)
	t.Log(err)
	var ce *cudaerr.Error
	var se *SymbolError
	assert.True(t, errors.As(err, &ce) || errors.As(err, &se), "got %T %v", err, err)
}

func TestValidShape(t *testing.T) {
	d := func(x, y, z uint32) backend.Dim3 { return backend.Dim3{X: x, Y: y, Z: z} }
	assert.True(t, validShape(d(1, 1, 1), d(1, 1, 1)))
	assert.True(t, validShape(d(1<<31-1, 65535, 65535), d(1024, 1, 1)))
	assert.True(t, validShape(d(1, 1, 1), d(16, 16, 4)))
	assert.False(t, validShape(d(0, 1, 1), d(32, 1, 1)))
	assert.False(t, validShape(d(1, 1, 1), d(32, 0, 1)))
	assert.False(t, validShape(d(1, 1, 1), d(2048, 1, 1)))
	assert.False(t, validShape(d(1, 1, 1), d(32, 32, 2)))
	assert.False(t, validShape(d(1, 1, 1), d(1, 1, 128)))
	assert.False(t, validShape(d(1, 65536, 1), d(1, 1, 1)))
	assert.False(t, validShape(d(1<<31, 1, 1), d(1, 1, 1)))
}

func TestConfigErrorRelabels(t *testing.T) {
	rt := mustLoad(t)
	in := rt.driverError("cuLaunchKernel", int32(cudaerr.InvalidValue))
	err := rt.configError(in, backend.Dim3{X: 0, Y: 1, Z: 1}, backend.Dim3{X: 32, Y: 1, Z: 1})
	assert.ErrorIs(t, err, cudaerr.InvalidConfiguration)
	var ce *cudaerr.Error
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "cuLaunchKernel", ce.Op)
	assert.Contains(t, err.Error(), "grid (0,1,1) block (32,1,1)")
}

func TestFramesDoNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's instrumentation allocates")
	}
	rt := mustLoad(t)
	var f callFrame
	allocs := testing.AllocsPerRun(100, func() { _, _ = rt.invoke(fnGetLastError, &f) })
	assert.Zero(t, allocs, "a call on a frame")
	var a KernelArgs
	fill := func() {
		a.Reset()
		for i := range 6 {
			a.Add(uint64(i))
		}
		_ = a.Pointers()
	}
	fill()
	assert.Zero(t, testing.AllocsPerRun(100, fill), "reused kernel arguments")
}
