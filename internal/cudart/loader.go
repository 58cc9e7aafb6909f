package cudart

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/ebitengine/purego"
	"go.uber.org/zap"
)

// rtldNoload is glibc's RTLD_NOLOAD (not a purego constant): dlopen only succeeds when the
// library is already in the process.
const rtldNoload = 0x4

// Option configures Load and LoadNVRTC.
type Option func(*loadConfig)

// WithLogger logs the search (each attempt at debug level, the library loaded at info level).
// The default is a no-op logger.
func WithLogger(l *zap.Logger) Option {
	return func(c *loadConfig) {
		if l != nil {
			c.log = l
		}
	}
}

// WithPath names the library file to load, like the GPUACTOR_CUDART / GPUACTOR_NVRTC
// environment variables, which it overrides. A directory is searched for the usual sonames.
func WithPath(path string) Option { return func(c *loadConfig) { c.path = path } }

type loadConfig struct {
	log         *zap.Logger
	path        string
	getenv      func(string) string
	glob        func(string) ([]string, error)
	probeLoaded bool   // step 0: reuse a copy already in the process
	targetDir   string // CUDA's targets/<triple> directory name
}

func newConfig(opts []Option) loadConfig {
	c := loadConfig{
		log:         zap.NewNop(),
		getenv:      os.Getenv,
		glob:        filepath.Glob,
		probeLoaded: true,
		targetDir:   "x86_64-linux",
	}
	if runtime.GOARCH == "arm64" {
		c.targetDir = "sbsa-linux"
	}
	for _, o := range opts {
		o(&c)
	}
	return c
}

// libSpec describes one library the loader can find.
type libSpec struct {
	name      string   // "libcudart"
	envVar    string   // the explicit override
	wheelDirs []string // directories inside site-packages
	sonames   []string // newest first; the unversioned name last
	nvrtc     bool     // open libnvrtc-builtins first when loading by path
}

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

// openedLib is a successfully dlopened library.
type openedLib struct {
	handle uintptr
	name   string // what was passed to dlopen: a soname or a path
	file   string // the file behind it, symlinks resolved ("" when unknown)
	step   string // the search step that found it
}

// The loaded libraries: the package's only global state besides the host-function trampoline.
// Only successes are cached; a failed Load searches again next time.
var (
	loadedRT struct {
		mu sync.Mutex
		rt *Runtime
	}
	loadedNV struct {
		mu sync.Mutex
		nv *NVRTC
	}
)

// Load returns the process's CUDA runtime, loading libcudart on the first successful call; later
// calls return the same *Runtime and ignore their options.
//
// The search stops at the first library that loads:
//
//  1. a libcudart already in the process (dlopen with RTLD_NOLOAD of each soname);
//  2. WithPath, else $GPUACTOR_CUDART: an explicit choice, so when it fails Load fails (a copy
//     already in the process still wins, with a warning: two runtimes in one process conflict);
//  3. pip wheels: nvidia/cu13/lib and nvidia/cuda_runtime/lib under the site-packages
//     directories of $VIRTUAL_ENV/lib/python3*/site-packages and of $PYTHONPATH's entries;
//  4. $CONDA_PREFIX/lib;
//  5. the plain sonames libcudart.so.13, .12, .11.0 and libcudart.so (ld.so.cache,
//     LD_LIBRARY_PATH);
//  6. $CUDA_HOME then $CUDA_PATH: lib64, lib, targets/<arch>-linux/lib;
//  7. /usr/local/cuda*/lib64 and /usr/local/cuda*/targets/<arch>-linux/lib.
//
// When nothing loads the error is a *LoadError listing every path tried with dlerror's text.
func Load(opts ...Option) (*Runtime, error) {
	loadedRT.mu.Lock()
	defer loadedRT.mu.Unlock()
	if loadedRT.rt != nil {
		return loadedRT.rt, nil
	}
	cfg := newConfig(opts)
	lib, err := search(cudartSpec, cfg)
	if err != nil {
		return nil, err
	}
	loadedRT.rt = newRuntime(lib, cfg.log)
	return loadedRT.rt, nil
}

// LoadNVRTC returns the process's NVRTC, loading libnvrtc on the first successful call, with
// the same search as Load (override: WithPath or $GPUACTOR_NVRTC; wheel directories
// nvidia/cu13/lib and nvidia/cuda_nvrtc/lib; sonames libnvrtc.so.13, .12, .11.2, libnvrtc.so).
// When libnvrtc is opened by path, the libnvrtc-builtins.so.* beside it is opened first, since
// libnvrtc finds it by soname only.
func LoadNVRTC(opts ...Option) (*NVRTC, error) {
	loadedNV.mu.Lock()
	defer loadedNV.mu.Unlock()
	if loadedNV.nv != nil {
		return loadedNV.nv, nil
	}
	cfg := newConfig(opts)
	lib, err := search(nvrtcSpec, cfg)
	if err != nil {
		return nil, err
	}
	loadedNV.nv = newNVRTC(lib, cfg.log)
	return loadedNV.nv, nil
}

// searcher runs one search, recording every attempt.
type searcher struct {
	spec     libSpec
	cfg      loadConfig
	attempts []Attempt
	seenDirs map[string]bool
}

// search looks for spec's library without touching the process-wide cache.
func search(spec libSpec, cfg loadConfig) (openedLib, error) {
	s := &searcher{spec: spec, cfg: cfg, seenDirs: map[string]bool{}}
	lib, ok := s.run()
	if !ok {
		return openedLib{}, &LoadError{Library: spec.name, Attempts: s.attempts}
	}
	cfg.log.Info("cudart: library loaded",
		zap.String("library", spec.name), zap.String("name", lib.name),
		zap.String("file", lib.file), zap.String("step", lib.step))
	return lib, nil
}

func (s *searcher) run() (openedLib, bool) {
	env := s.cfg.getenv
	// 1. Already loaded.
	if s.cfg.probeLoaded {
		for _, so := range s.spec.sonames {
			h, err := dlopen(so, purego.RTLD_NOW|rtldNoload)
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
		step := "WithPath"
		if s.cfg.path == "" {
			step = "$" + s.spec.envVar
		}
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			return s.dir(step, p)
		}
		return s.file(step, p)
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

// override is the explicitly named library, "" when there is none.
func (s *searcher) override() string {
	if s.cfg.path != "" {
		return s.cfg.path
	}
	return s.cfg.getenv(s.spec.envVar)
}

func (s *searcher) fail(step, path, why string) {
	s.attempts = append(s.attempts, Attempt{Step: step, Path: path, Err: why})
	s.cfg.log.Debug("cudart: not loaded", zap.String("library", s.spec.name),
		zap.String("step", step), zap.String("path", path), zap.String("error", why))
}

func (s *searcher) found(h uintptr, name, step string) openedLib {
	file := name
	if !filepath.IsAbs(name) {
		file = handlePath(h)
	}
	return openedLib{handle: h, name: name, file: realFile(file), step: step}
}

// open dlopens a soname or a path (never dlclosed).
func (s *searcher) open(step, name string) (openedLib, bool) {
	if s.spec.nvrtc && filepath.IsAbs(name) {
		s.openBuiltins(step, name)
	}
	h, err := dlopen(name, purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		s.fail(step, name, err.Error())
		return openedLib{}, false
	}
	return s.found(h, name, step), true
}

// file opens one explicitly named file (a name without a slash goes to the dynamic loader's
// own search, like a soname).
func (s *searcher) file(step, path string) (openedLib, bool) {
	if strings.ContainsRune(path, '/') {
		if abs, err := filepath.Abs(path); err == nil {
			path = abs
		}
	}
	return s.open(step, path)
}

// dir tries every soname in one directory (each directory once per search).
func (s *searcher) dir(step, dir string) (openedLib, bool) {
	key := realFile(filepath.Clean(dir))
	if s.seenDirs[key] {
		return openedLib{}, false
	}
	s.seenDirs[key] = true
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		s.fail(step, dir, "no such directory")
		return openedLib{}, false
	}
	present := false
	for _, so := range s.spec.sonames {
		p := filepath.Join(dir, so)
		if _, err := os.Stat(p); err != nil {
			continue
		}
		present = true
		if lib, ok := s.open(step, p); ok {
			return lib, true
		}
	}
	if !present {
		s.fail(step, dir, "none of "+strings.Join(s.spec.sonames, ", ")+" in this directory")
	}
	return openedLib{}, false
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
		return -compareVersions(soVersion(a), soVersion(b))
	})
	for _, m := range matches {
		if _, err := dlopen(m, purego.RTLD_NOW|purego.RTLD_GLOBAL); err != nil {
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
		slices.SortFunc(m, func(a, b string) int { return -compareVersions(digits(a), digits(b)) })
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
		return -compareVersions(digits(a), digits(b))
	})
	return m
}

// digits extracts the runs of decimal digits in s: "/usr/local/cuda-12.10" gives [12 10].
func digits(s string) []int {
	var out []int
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r < '0' || r > '9' }) {
		if n, err := strconv.Atoi(f); err == nil {
			out = append(out, n)
		}
	}
	return out
}

func compareVersions(a, b []int) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return a[i] - b[i]
		}
	}
	return len(a) - len(b)
}
