package cudart

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testConfig is a search configuration with a fake environment and no "already loaded" step
// (other tests may have loaded the library into this process already).
func testConfig(env map[string]string) loadConfig {
	c := newConfig(nil)
	c.getenv = func(k string) string { return env[k] }
	c.probeLoaded = false
	return c
}

func TestLoadFindsARuntime(t *testing.T) {
	rt := mustLoad(t)
	assert.NotEmpty(t, rt.Path())
	assert.Contains(t, filepath.Base(rt.Path()), "libcudart.so")
	assert.GreaterOrEqual(t, rt.Major(), 11)
	again, err := Load()
	require.NoError(t, err)
	assert.Same(t, rt, again, "Load is idempotent")
}

func TestLoadNVRTCIsIdempotent(t *testing.T) {
	nv := mustLoadNVRTC(t)
	again, err := LoadNVRTC()
	require.NoError(t, err)
	assert.Same(t, nv, again)
	assert.Contains(t, filepath.Base(nv.Path()), "libnvrtc.so")
}

func TestSearchDebianSonames(t *testing.T) {
	needDebian118(t)
	lib, err := search(cudartSpec, testConfig(nil))
	require.NoError(t, err)
	assert.Equal(t, "libcudart.so.11.0", lib.name)
	assert.Equal(t, "soname", lib.step)
	assert.Equal(t, "libcudart.so.11.8.89", filepath.Base(lib.file), "real file found through dlinfo")

	rt := newRuntime(lib, nil)
	assert.Equal(t, 11, rt.Major())
	v, err := rt.RuntimeVersion()
	require.NoError(t, err)
	assert.Equal(t, 11080, v, "from cudaRuntimeGetVersion, or the file name without a driver")

	nlib, err := search(nvrtcSpec, testConfig(nil))
	require.NoError(t, err)
	assert.Equal(t, "libnvrtc.so.11.2", nlib.name)
	nv := newNVRTC(nlib, nil)
	assert.Equal(t, 11, nv.Major())
}

func TestSearchAlreadyLoaded(t *testing.T) {
	rt := mustLoad(t) // make sure one copy is in the process
	c := newConfig(nil)
	c.getenv = func(string) string { return "" }
	lib, err := search(cudartSpec, c)
	require.NoError(t, err)
	assert.Equal(t, "already loaded", lib.step)
	assert.Equal(t, rt.lib.handle, lib.handle, "dlopen of a loaded library returns its handle")
}

func TestSearchEnvOverrideBogusPathFails(t *testing.T) {
	bogus := filepath.Join(t.TempDir(), "nowhere", "libcudart.so.13")
	_, err := search(cudartSpec, testConfig(map[string]string{"GPUACTOR_CUDART": bogus}))
	require.Error(t, err)
	var le *LoadError
	require.ErrorAs(t, err, &le)
	assert.ErrorIs(t, err, ErrLibraryNotFound)
	assert.Equal(t, "libcudart", le.Library)
	require.Len(t, le.Attempts, 1, "an explicit override is final: %v", err)
	assert.Equal(t, "$GPUACTOR_CUDART", le.Attempts[0].Step)
	assert.Equal(t, bogus, le.Attempts[0].Path)
	assert.Contains(t, err.Error(), bogus)
	assert.Contains(t, err.Error(), "cannot open shared object file", "dlerror's text")
}

func TestSearchEnvOverrideRealFile(t *testing.T) {
	needDebian118(t)
	lib, err := search(cudartSpec, testConfig(map[string]string{"GPUACTOR_CUDART": debianCudart}))
	require.NoError(t, err)
	assert.Equal(t, "$GPUACTOR_CUDART", lib.step)
	assert.Equal(t, debianCudart, lib.name)
	assert.Equal(t, 11, newRuntime(lib, nil).Major())

	// WithPath wins over the environment variable.
	c := testConfig(map[string]string{"GPUACTOR_CUDART": "/bogus/libcudart.so"})
	WithPath(debianDir)(&c) // a directory: searched for the sonames
	lib, err = search(cudartSpec, c)
	require.NoError(t, err)
	assert.Equal(t, "WithPath", lib.step)
	assert.Equal(t, debianCudart, lib.name)
}

func TestSearchNVRTCByPathOpensBuiltins(t *testing.T) {
	needDebian118(t)
	lib, err := search(nvrtcSpec, testConfig(map[string]string{"GPUACTOR_NVRTC": debianNVRTC}))
	require.NoError(t, err)
	nv := newNVRTC(lib, nil)
	prog, err := nv.Compile(saxpySrc, "saxpy.cu", []string{"--gpu-architecture=compute_80"})
	require.NoError(t, err, "NVRTC opened by path needs its builtins library")
	assert.Contains(t, string(prog.PTX), "saxpy")
}

// A pip-wheel layout: <venv>/lib/python3.X/site-packages/nvidia/cu13/lib/libcudart.so.13.
func TestSearchPipWheel(t *testing.T) {
	needDebian118(t)
	venv := t.TempDir()
	libDir := filepath.Join(venv, "lib", "python3.12", "site-packages", "nvidia", "cu13", "lib")
	require.NoError(t, os.MkdirAll(libDir, 0o755))
	require.NoError(t, os.Symlink(filepath.Join(debianDir, "libcudart.so.11.8.89"), filepath.Join(libDir, "libcudart.so.13")))

	lib, err := search(cudartSpec, testConfig(map[string]string{"VIRTUAL_ENV": venv}))
	require.NoError(t, err)
	assert.Equal(t, "pip wheel", lib.step)
	assert.Equal(t, filepath.Join(libDir, "libcudart.so.13"), lib.name)
	assert.Equal(t, filepath.Join(debianDir, "libcudart.so.11.8.89"), lib.file)
}

// With nothing to find, the error lists every step with its reason.
func TestSearchNothingFoundListsEverything(t *testing.T) {
	spec := libSpec{
		name:      "libgpuactortest",
		envVar:    "GPUACTOR_TESTLIB",
		wheelDirs: []string{"nvidia/cu13/lib"},
		sonames:   []string{"libgpuactortest.so.13", "libgpuactortest.so"},
	}
	venv := t.TempDir()
	sp := filepath.Join(venv, "lib", "python3.11", "site-packages")
	require.NoError(t, os.MkdirAll(filepath.Join(sp, "nvidia", "cu13", "lib"), 0o755))
	cudaHome := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(cudaHome, "lib64"), 0o755))
	// A file that exists but is not a library: dlopen's own error must be reported.
	require.NoError(t, os.WriteFile(filepath.Join(cudaHome, "lib64", "libgpuactortest.so"), []byte("not ELF"), 0o644))

	c := testConfig(map[string]string{
		"VIRTUAL_ENV":  venv,
		"PYTHONPATH":   "/nonexistent/pythonpath",
		"CONDA_PREFIX": "/nonexistent/conda",
		"CUDA_HOME":    cudaHome,
	})
	c.probeLoaded = true
	c.glob = func(p string) ([]string, error) {
		if strings.HasPrefix(p, "/usr/local/cuda") {
			return []string{"/nonexistent/cuda-12.4", "/usr/local/cuda"}, nil
		}
		return filepath.Glob(p)
	}
	_, err := search(spec, c)
	var le *LoadError
	require.ErrorAs(t, err, &le)
	msg := err.Error()
	for _, want := range []string{
		"[already loaded] libgpuactortest.so.13: not loaded in this process",
		"[pip wheel] " + filepath.Join(sp, "nvidia", "cu13", "lib") + ": none of libgpuactortest.so.13, libgpuactortest.so",
		"[pip wheel] /nonexistent/pythonpath/nvidia/cu13/lib: no such directory",
		"[$CONDA_PREFIX] /nonexistent/conda/lib: no such directory",
		"[soname] libgpuactortest.so.13: libgpuactortest.so.13: cannot open shared object file",
		"[soname] libgpuactortest.so: ",
		"[$CUDA_HOME] " + filepath.Join(cudaHome, "lib64", "libgpuactortest.so") + ": ",
		"[$CUDA_HOME] " + filepath.Join(cudaHome, "targets", "x86_64-linux", "lib") + ": no such directory",
		"[/usr/local/cuda*] /nonexistent/cuda-12.4/lib64: no such directory",
	} {
		assert.Contains(t, msg, want)
	}
	assert.True(t, errors.Is(err, ErrLibraryNotFound))
	// /usr/local/cuda is tried before versioned directories.
	iPlain := strings.Index(msg, "] /usr/local/cuda/lib64")
	iVer := strings.Index(msg, "/nonexistent/cuda-12.4/lib64")
	if iPlain >= 0 {
		assert.Less(t, iPlain, iVer)
	}
}
