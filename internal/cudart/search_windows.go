package cudart

import (
	"path/filepath"
	"runtime"
	"slices"

	"github.com/gpuactor/gpuactor/internal/clib"
)

// goarch picks CUDA's targets/<triple> directory name (Linux layouts only).
const goarch = runtime.GOARCH

// The libraries Load and LoadNVRTC look for, by their Windows DLL names: CUDA 13, 12 and
// 11.x (cudart64_110.dll serves every 11.x; nvrtc64_112_0.dll serves 11.2 to 11.8).
var (
	cudartSpec = libSpec{
		name:    "libcudart",
		envVar:  "GPUACTOR_CUDART",
		sonames: []string{"cudart64_13.dll", "cudart64_12.dll", "cudart64_110.dll"},
	}
	nvrtcSpec = libSpec{
		name:    "libnvrtc",
		envVar:  "GPUACTOR_NVRTC",
		sonames: []string{"nvrtc64_130_0.dll", "nvrtc64_120_0.dll", "nvrtc64_112_0.dll"},
		nvrtc:   true,
	}
)

// run searches, stopping at the first DLL that loads:
//
//  1. WithPath, else the environment override (strict, as on Linux);
//  2. $CUDA_PATH then $CUDA_HOME: bin\x64 (CUDA 13's layout), then bin;
//  3. $CONDA_PREFIX\Library\bin;
//  4. the plain DLL names through the system's DLL search, which ends with PATH.
//
// Pip wheels' DLL directories and the CUDA_PATH_Vxx_y variables are not searched.
func (s *searcher) run() (openedLib, bool) {
	env := s.cfg.getenv
	if p := s.override(); p != "" {
		return s.overridden(p)
	}
	for _, v := range []string{"CUDA_PATH", "CUDA_HOME"} {
		root := env(v)
		if root == "" {
			continue
		}
		for _, rel := range []string{filepath.Join("bin", "x64"), "bin"} {
			if lib, ok := s.dir("$"+v, filepath.Join(root, rel)); ok {
				return lib, true
			}
		}
	}
	if c := env("CONDA_PREFIX"); c != "" {
		if lib, ok := s.dir("$CONDA_PREFIX", filepath.Join(c, "Library", "bin")); ok {
			return lib, true
		}
	}
	for _, name := range s.spec.sonames {
		if lib, ok := s.open("DLL search", name); ok {
			return lib, true
		}
	}
	return openedLib{}, false
}

// open loads a DLL by name or by full path (never freed). A DLL opened by path finds its own
// dependencies beside it first.
func (s *searcher) open(step, name string) (openedLib, bool) {
	var flags uintptr
	if filepath.IsAbs(name) {
		flags = loadWithAlteredSearchPath
		if s.spec.nvrtc {
			s.openBuiltins(step, name)
		}
	}
	h, err := loadLibrary(name, flags)
	if err != nil {
		s.fail(step, name, err.Error())
		return openedLib{}, false
	}
	return s.found(h, name, step), true
}

// openBuiltins loads the nvrtc-builtins64_*.dll next to an NVRTC DLL opened by path: NVRTC
// loads it by name at its first compile, and Windows finds a DLL already loaded by its name.
// The newest comes first; failures are recorded but do not stop the attempt.
func (s *searcher) openBuiltins(step, nvrtcPath string) {
	matches, _ := s.cfg.glob(filepath.Join(filepath.Dir(nvrtcPath), "nvrtc-builtins64_*.dll"))
	slices.SortFunc(matches, func(a, b string) int { return -clib.CompareVersions(clib.Digits(a), clib.Digits(b)) })
	for _, m := range matches {
		if _, err := loadLibrary(m, loadWithAlteredSearchPath); err != nil {
			s.fail(step+" (builtins)", m, err.Error())
			continue
		}
		return
	}
}
