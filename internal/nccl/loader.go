package nccl

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/clib"
)

// EnvVar names the library file (or a directory holding it) to load instead of searching.
// When it is set the search is strict: if that library does not load, nothing else is tried.
const EnvVar = "GPUACTOR_NCCL"

// wheelDir is where NVIDIA's nvidia-nccl-cu1x wheels put the library, under site-packages.
const wheelDir = "nvidia/nccl/lib"

// sonames are the names tried in each directory and through the dynamic loader, in order.
var sonames = []string{"libnccl.so.2", "libnccl.so"}

// Attempt is one place the loader looked.
type Attempt struct {
	Step string // the search step: "already loaded", "$GPUACTOR_NCCL", "pip wheel", "$CONDA_PREFIX", "soname"
	Path string // the file, soname or directory tried
	Err  string // why it did not load: dlerror's text, or why the path was skipped
}

// LoadError reports that no libnccl could be loaded, with every path tried. It matches
// backend.ErrCollUnavailable with errors.Is.
type LoadError struct {
	Attempts []Attempt
}

// Error lists every attempt, one a line.
func (e *LoadError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "nccl: cannot load libnccl; tried %d paths:", len(e.Attempts))
	for _, a := range e.Attempts {
		fmt.Fprintf(&b, "\n  [%s] %s: %s", a.Step, a.Path, a.Err)
	}
	return b.String()
}

// Unwrap is backend.ErrCollUnavailable.
func (e *LoadError) Unwrap() error { return backend.ErrCollUnavailable }

// fsys is what the search touches, replaced in tests by a fake file system.
type fsys struct {
	getenv func(string) string
	glob   func(string) ([]string, error)
	isDir  func(string) bool
	exists func(string) bool
	open   func(name string, noload bool) (uintptr, error)
	home   func() (string, error)
}

func osFS() fsys {
	return fsys{
		getenv: os.Getenv,
		glob:   filepath.Glob,
		isDir: func(p string) bool {
			st, err := os.Stat(p)
			return err == nil && st.IsDir()
		},
		exists: func(p string) bool {
			_, err := os.Stat(p)
			return err == nil
		},
		open: dlopen,
		home: os.UserHomeDir,
	}
}

// found is a library the search opened.
type found struct {
	handle uintptr
	path   string // what was passed to dlopen
	step   string
}

type searcher struct {
	fs       fsys
	attempts []Attempt
	seen     map[string]bool
}

// search looks for libnccl in the order Load documents.
func search(fs fsys) (found, error) {
	s := &searcher{fs: fs, seen: map[string]bool{}}
	if f, ok := s.run(); ok {
		return f, nil
	}
	return found{}, &LoadError{Attempts: s.attempts}
}

func (s *searcher) fail(step, path, why string) {
	s.attempts = append(s.attempts, Attempt{Step: step, Path: path, Err: why})
}

func (s *searcher) open(step, name string) (found, bool) {
	h, err := s.fs.open(name, false)
	if err != nil {
		s.fail(step, name, err.Error())
		return found{}, false
	}
	return found{handle: h, path: name, step: step}, true
}

// dir tries each soname in dir (each directory once per search).
func (s *searcher) dir(step, dir string) (found, bool) {
	dir = filepath.Clean(dir)
	if s.seen[dir] {
		return found{}, false
	}
	s.seen[dir] = true
	if !s.fs.isDir(dir) {
		s.fail(step, dir, "no such directory")
		return found{}, false
	}
	present := false
	for _, so := range sonames {
		p := filepath.Join(dir, so)
		if !s.fs.exists(p) {
			continue
		}
		present = true
		if f, ok := s.open(step, p); ok {
			return f, true
		}
	}
	if !present {
		s.fail(step, dir, "none of "+strings.Join(sonames, ", ")+" in this directory")
	}
	return found{}, false
}

func (s *searcher) run() (found, bool) {
	// 1. The override, strictly: even over a copy already loaded, which RTLD_LOCAL keeps
	// apart from this one.
	if p := s.fs.getenv(EnvVar); p != "" {
		step := "$" + EnvVar
		if s.fs.isDir(p) {
			return s.dir(step, p)
		}
		if abs, err := filepath.Abs(p); err == nil && strings.ContainsRune(p, '/') {
			p = abs
		}
		return s.open(step, p)
	}
	// 2. A copy already in the process (a framework's): a second copy would be a second set
	// of NCCL globals.
	for _, so := range sonames {
		if h, err := s.fs.open(so, true); err == nil {
			return found{handle: h, path: so, step: "already loaded"}, true
		}
		s.fail("already loaded", so, "not loaded in this process")
	}
	// 3. pip wheels.
	for _, sp := range s.sitePackages() {
		if f, ok := s.dir("pip wheel", filepath.Join(sp, wheelDir)); ok {
			return f, true
		}
	}
	// 4. conda.
	if c := s.fs.getenv("CONDA_PREFIX"); c != "" {
		if f, ok := s.dir("$CONDA_PREFIX", filepath.Join(c, "lib")); ok {
			return f, true
		}
	}
	// 5. The dynamic loader's own search (ld.so.cache, LD_LIBRARY_PATH).
	for _, so := range sonames {
		if f, ok := s.open("soname", so); ok {
			return f, true
		}
	}
	return found{}, false
}

// sitePackages lists the Python package directories a wheel may be in: the virtual
// environment's, $PYTHONPATH's entries, the user's, then the system Python's (Debian's
// dist-packages, where a pip install as root puts PyTorch and its nvidia-nccl wheel), newest
// Python first within each glob.
func (s *searcher) sitePackages() []string {
	var out []string
	add := func(pattern string) {
		m, _ := s.fs.glob(pattern)
		slices.SortFunc(m, func(a, b string) int { return -clib.CompareVersions(clib.Digits(a), clib.Digits(b)) })
		out = append(out, m...)
	}
	if venv := s.fs.getenv("VIRTUAL_ENV"); venv != "" {
		add(filepath.Join(venv, "lib", "python3*", "site-packages"))
	}
	for _, p := range filepath.SplitList(s.fs.getenv("PYTHONPATH")) {
		if p != "" {
			out = append(out, p)
		}
	}
	if home, err := s.fs.home(); err == nil && home != "" {
		add(filepath.Join(home, ".local", "lib", "python3*", "site-packages"))
	}
	add("/usr/local/lib/python3*/dist-packages")
	add("/usr/local/lib/python3*/site-packages")
	out = append(out, "/usr/lib/python3/dist-packages")
	add("/usr/lib/python3*/site-packages")
	return out
}

// errNoSymbol is the cause of a call to a function the loaded library lacks.
var errNoSymbol = errors.New("not exported by the loaded libnccl (too old)")
