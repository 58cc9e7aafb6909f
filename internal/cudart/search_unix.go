//go:build !windows

package cudart

import (
	"path/filepath"
	"runtime"
	"slices"

	"go.uber.org/zap"

	"github.com/gpuactor/gpuactor/internal/clib"
)

// goarch picks CUDA's targets/<triple> directory name.
const goarch = runtime.GOARCH

// The libraries Load and LoadNVRTC look for, by their Linux sonames.
var (
	cudartSpec = libSpec{
		name:      "libcudart",
		envVar:    "GPUACTOR_CUDART",
		wheelDirs: []string{"nvidia/cu13/lib", "nvidia/cuda_runtime/lib"},
		sonames:   []string{"libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0", "libcudart.so"},
	}
	nvrtcSpec = libSpec{
		name:      "libnvrtc",
		envVar:    "GPUACTOR_NVRTC",
		wheelDirs: []string{"nvidia/cu13/lib", "nvidia/cuda_nvrtc/lib"},
		sonames:   []string{"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2", "libnvrtc.so"},
		nvrtc:     true,
	}
)

// run searches in the order Load documents, stopping at the first library that loads.
func (s *searcher) run() (openedLib, bool) {
	if runtime.GOOS == "darwin" {
		s.fail("platform", runtime.GOOS, "no CUDA on macOS (NVIDIA's last macOS toolkit was 10.2; "+
			"gpuactor needs 11.8 or newer): use the simulator")
		return openedLib{}, false
	}
	env := s.cfg.getenv
	// 1. Already loaded.
	if s.cfg.probeLoaded {
		for _, so := range s.spec.sonames {
			h, err := dlopen(so, rtldNow|rtldNoload)
			if err != nil {
				s.fail("already loaded", so, "not loaded in this process")
				continue
			}
			if o := s.override(); o != "" {
				s.cfg.log.Warn("cudart: using the copy already loaded, not the override",
					zap.String("library", s.spec.name), zap.String("loaded", so), zap.String("override", o))
			}
			return s.found(h, so, "already loaded"), true
		}
	}
	// 2. Explicit override: strict.
	if p := s.override(); p != "" {
		return s.overridden(p)
	}
	// 3. pip wheels.
	for _, sp := range s.sitePackages() {
		for _, sub := range s.spec.wheelDirs {
			if lib, ok := s.dir("pip wheel", filepath.Join(sp, sub)); ok {
				return lib, true
			}
		}
	}
	// 4. conda.
	if c := env("CONDA_PREFIX"); c != "" {
		if lib, ok := s.dir("$CONDA_PREFIX", filepath.Join(c, "lib")); ok {
			return lib, true
		}
	}
	// 5. Plain sonames through the dynamic loader's own search.
	for _, so := range s.spec.sonames {
		if lib, ok := s.open("soname", so); ok {
			return lib, true
		}
	}
	// 6. CUDA_HOME, CUDA_PATH.
	for _, v := range []string{"CUDA_HOME", "CUDA_PATH"} {
		root := env(v)
		if root == "" {
			continue
		}
		for _, rel := range []string{"lib64", "lib", filepath.Join("targets", s.cfg.targetDir, "lib")} {
			if lib, ok := s.dir("$"+v, filepath.Join(root, rel)); ok {
				return lib, true
			}
		}
	}
	// 7. /usr/local/cuda*.
	for _, root := range s.cudaRoots() {
		for _, rel := range []string{"lib64", filepath.Join("targets", s.cfg.targetDir, "lib")} {
			if lib, ok := s.dir("/usr/local/cuda*", filepath.Join(root, rel)); ok {
				return lib, true
			}
		}
	}
	return openedLib{}, false
}

// open dlopens a soname or a path (never dlclosed).
func (s *searcher) open(step, name string) (openedLib, bool) {
	if s.spec.nvrtc && filepath.IsAbs(name) {
		s.openBuiltins(step, name)
	}
	h, err := dlopen(name, rtldNow|rtldGlobal)
	if err != nil {
		s.fail(step, name, err.Error())
		return openedLib{}, false
	}
	return s.found(h, name, step), true
}

// openBuiltins dlopens the libnvrtc-builtins.so.* next to libnvrtc so that libnvrtc's own
// dlopen by soname finds it. Failures are recorded but do not stop the attempt.
func (s *searcher) openBuiltins(step, nvrtcPath string) {
	dir := filepath.Dir(nvrtcPath)
	matches, _ := s.cfg.glob(filepath.Join(dir, "libnvrtc-builtins.so.*"))
	if len(matches) == 0 {
		return
	}
	want := soVersion(realFile(nvrtcPath)) // e.g. [11 8 89]: prefer builtins 11.8
	rank := func(p string) int {
		v := soVersion(p)
		r := 0
		if len(want) >= 2 && len(v) >= 2 && v[0] == want[0] && v[1] == want[1] {
			r -= 100
		}
		if len(v) == 2 { // the soname itself rather than the fully versioned file
			r -= 10
		}
		return r
	}
	slices.SortStableFunc(matches, func(a, b string) int {
		if d := rank(a) - rank(b); d != 0 {
			return d
		}
		return -clib.CompareVersions(soVersion(a), soVersion(b))
	})
	for _, m := range matches {
		if _, err := dlopen(m, rtldNow|rtldGlobal); err != nil {
			s.fail(step+" (builtins)", m, err.Error())
			continue
		}
		return
	}
}

// sitePackages lists site-packages directories: $VIRTUAL_ENV's (newest Python first), then
// every $PYTHONPATH entry.
func (s *searcher) sitePackages() []string {
	var out []string
	if venv := s.cfg.getenv("VIRTUAL_ENV"); venv != "" {
		m, _ := s.cfg.glob(filepath.Join(venv, "lib", "python3*", "site-packages"))
		slices.SortFunc(m, func(a, b string) int { return -clib.CompareVersions(clib.Digits(a), clib.Digits(b)) })
		out = append(out, m...)
	}
	for _, p := range filepath.SplitList(s.cfg.getenv("PYTHONPATH")) {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

// cudaRoots lists /usr/local/cuda first, then /usr/local/cuda-X.Y newest first.
func (s *searcher) cudaRoots() []string {
	m, _ := s.cfg.glob("/usr/local/cuda*")
	slices.SortFunc(m, func(a, b string) int {
		if (a == "/usr/local/cuda") != (b == "/usr/local/cuda") {
			if a == "/usr/local/cuda" {
				return -1
			}
			return 1
		}
		return -clib.CompareVersions(clib.Digits(a), clib.Digits(b))
	})
	return m
}
