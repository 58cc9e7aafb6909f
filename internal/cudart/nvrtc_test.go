package cudart

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNVRTCVersionAndArchs(t *testing.T) {
	nv := mustLoadNVRTC(t)
	maj, mnr, err := nv.Version()
	require.NoError(t, err)
	assert.Equal(t, nv.Major(), maj)
	assert.GreaterOrEqual(t, maj, 11)
	archs, err := nv.SupportedArchs()
	require.NoError(t, err)
	assert.Contains(t, archs, 80)
	assert.Contains(t, archs, 90)
	assert.True(t, slices.IsSorted(archs))
	t.Logf("NVRTC %d.%d (%s): archs %v", maj, mnr, nv.Path(), archs)
}

func TestNVRTCCompilePTX(t *testing.T) {
	nv := mustLoadNVRTC(t)
	prog, err := nv.Compile(saxpySrc, "saxpy.cu", []string{"--gpu-architecture=compute_80"})
	require.NoError(t, err)
	ptx := string(prog.PTX)
	assert.Contains(t, ptx, ".target sm_80")
	assert.Contains(t, ptx, ".entry saxpy(")
	assert.Contains(t, ptx, ".entry empty(")
	assert.NotContains(t, ptx, "\x00", "PTX comes back without its NUL")
	assert.Empty(t, prog.Cubin, "a virtual architecture gives no cubin")
	assert.Equal(t, "saxpy.cu", prog.Name)
}

func TestNVRTCCompileCubin(t *testing.T) {
	nv := mustLoadNVRTC(t)
	prog, err := nv.Compile(saxpySrc, "", []string{"--gpu-architecture=sm_80", "-default-device"})
	require.NoError(t, err)
	require.NotEmpty(t, prog.Cubin)
	assert.True(t, bytes.HasPrefix(prog.Cubin, []byte("\x7fELF")), "a cubin is an ELF file")
	assert.True(t, isBinaryImage(prog.Cubin))
	assert.Equal(t, "kernel.cu", prog.Name)
}

func TestNVRTCCompileError(t *testing.T) {
	nv := mustLoadNVRTC(t)
	src := "extern \"C\" __global__ void broken(float *y) {\n" +
		"    y[0] = 1.0f;\n" +
		"    y[1] = undeclared_thing;\n" +
		"}\n"
	_, err := nv.Compile(src, "broken.cu", []string{"--gpu-architecture=compute_80"})
	require.Error(t, err)
	var ce *CompileError
	require.ErrorAs(t, err, &ce)
	assert.ErrorIs(t, err, ErrCompile)
	assert.ErrorIs(t, err, NVRTCErrorCompilation)
	assert.Equal(t, NVRTCErrorCompilation, ce.Code)
	assert.Contains(t, ce.Log, "broken.cu(3)", "the log names the failing line")
	assert.Contains(t, ce.Log, "undeclared_thing")
	assert.Contains(t, err.Error(), "nvrtc: compiling broken.cu failed: NVRTC_ERROR_COMPILATION")
	assert.Contains(t, err.Error(), ce.Log, "Error() carries the whole log")
}

func TestNVRTCBadOption(t *testing.T) {
	nv := mustLoadNVRTC(t)
	_, err := nv.Compile(saxpySrc, "saxpy.cu", []string{"--no-such-option-at-all"})
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrCompile)
	assert.ErrorIs(t, err, NVRTCErrorInvalidOption)
}

func TestNVRTCErrorStrings(t *testing.T) {
	nv := mustLoadNVRTC(t)
	assert.Equal(t, "NVRTC_ERROR_COMPILATION", nv.ErrorString(NVRTCErrorCompilation))
	assert.Equal(t, "NVRTC_SUCCESS", nv.ErrorString(NVRTCSuccess))
	assert.Equal(t, "NVRTC_ERROR_INVALID_OPTION", NVRTCErrorInvalidOption.Name())
	assert.Equal(t, "nvrtcResult(99)", NVRTCResult(99).Name())

	err := nv.newError("nvrtcCreateProgram", NVRTCErrorOutOfMemory)
	assert.ErrorIs(t, err, NVRTCErrorOutOfMemory)
	assert.Equal(t, "nvrtcCreateProgram: NVRTC_ERROR_OUT_OF_MEMORY (1)", err.Error())
	var ne *NVRTCError
	assert.True(t, errors.As(err, &ne))
}

func ExampleNVRTC_Compile() {
	nv, err := LoadNVRTC()
	if err != nil {
		fmt.Println(err)
		return
	}
	prog, err := nv.Compile(`extern "C" __global__ void k(int *p) { *p = 1; }`, "k.cu",
		[]string{"--gpu-architecture=compute_80"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(bytes.Contains(prog.PTX, []byte(".entry k(")))
	// Output: true
}
