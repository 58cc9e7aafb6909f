package cudart

import (
	"os"
	"path/filepath"
	"strings"
	"sync"

	"go.uber.org/zap"
)

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
	if goarch == "arm64" {
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
// On Windows the DLLs cudart64_13.dll, cudart64_12.dll and cudart64_110.dll are searched for
// instead: WithPath or $GPUACTOR_CUDART, $CUDA_PATH and $CUDA_HOME (bin\x64, bin),
// $CONDA_PREFIX\Library\bin, then the system's DLL search, which ends with PATH. On macOS,
// where CUDA 11.8 and later do not exist, Load fails at once.
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

// file opens one explicitly named file (a name without a slash goes to the dynamic loader's
// own search, like a soname).
func (s *searcher) file(step, path string) (openedLib, bool) {
	if strings.ContainsAny(path, `/`+string(filepath.Separator)) {
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

// overridden opens the library an override names, strictly: a directory to look in or the
// file itself, and nothing else when that fails.
func (s *searcher) overridden(p string) (openedLib, bool) {
	step := "WithPath"
	if s.cfg.path == "" {
		step = "$" + s.spec.envVar
	}
	if st, err := os.Stat(p); err == nil && st.IsDir() {
		return s.dir(step, p)
	}
	return s.file(step, p)
}

// found is the library a search step opened: its handle, the name it was opened by, and the
// file behind it (the loader's own answer for a bare name, whose path the search never saw).
func (s *searcher) found(h uintptr, name, step string) openedLib {
	file := name
	if !filepath.IsAbs(name) {
		file = handlePath(h)
	}
	return openedLib{handle: h, name: name, file: realFile(file), step: step}
}

// realFile resolves symlinks; it returns p unchanged when that fails.
func realFile(p string) string {
	if p == "" {
		return ""
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}
