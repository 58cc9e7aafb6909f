package nccl

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/internal/backend"
)

// fakeFS is a file system of the given files (directories are implied by them); open
// succeeds for the names in loadable (paths or sonames), and for already-loaded ones with
// noload.
type fakeFS struct {
	env      map[string]string
	files    []string
	loadable map[string]bool
	inProc   map[string]bool
	opened   []string
}

func (f *fakeFS) fs() fsys {
	return fsys{
		getenv: func(k string) string { return f.env[k] },
		glob: func(p string) ([]string, error) {
			var out []string
			seen := map[string]bool{}
			for _, file := range f.files {
				for d := file; d != "/" && d != "."; d = filepath.Dir(d) {
					if ok, _ := filepath.Match(p, d); ok && !seen[d] {
						seen[d] = true
						out = append(out, d)
					}
				}
			}
			return out, nil
		},
		isDir: func(p string) bool {
			for _, file := range f.files {
				if strings.HasPrefix(file, p+"/") {
					return true
				}
			}
			return false
		},
		exists: func(p string) bool {
			for _, file := range f.files {
				if file == p {
					return true
				}
			}
			return false
		},
		open: func(name string, noload bool) (uintptr, error) {
			if noload {
				if f.inProc[name] {
					return 1, nil
				}
				return 0, errors.New("not loaded")
			}
			f.opened = append(f.opened, name)
			if f.loadable[name] {
				return 2, nil
			}
			return 0, errors.New(name + ": cannot open shared object file")
		},
		home: func() (string, error) { return "/home/u", nil },
	}
}

func TestSearchOrder(t *testing.T) {
	wheel := "/usr/local/lib/python3.12/dist-packages/nvidia/nccl/lib/libnccl.so.2"
	old := "/usr/local/lib/python3.10/dist-packages/nvidia/nccl/lib/libnccl.so.2"
	venv := "/v/lib/python3.11/site-packages/nvidia/nccl/lib/libnccl.so.2"
	conda := "/c/lib/libnccl.so.2"
	all := []string{wheel, old, venv, conda}
	every := map[string]bool{wheel: true, old: true, venv: true, conda: true, "libnccl.so.2": true}

	cases := []struct {
		name string
		env  map[string]string
		load map[string]bool
		want string
		step string
	}{
		{"virtualenv first", map[string]string{"VIRTUAL_ENV": "/v", "CONDA_PREFIX": "/c"}, every, venv, "pip wheel"},
		{"system python, newest first", map[string]string{"CONDA_PREFIX": "/c"}, every, wheel, "pip wheel"},
		{"a wheel that fails gives way to the next", nil, map[string]bool{old: true}, old, "pip wheel"},
		{"conda after wheels", map[string]string{"CONDA_PREFIX": "/c"}, map[string]bool{conda: true, "libnccl.so.2": true}, conda, "$CONDA_PREFIX"},
		{"soname last", nil, map[string]bool{"libnccl.so.2": true}, "libnccl.so.2", "soname"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ff := &fakeFS{env: c.env, files: all, loadable: c.load}
			f, err := search(ff.fs())
			require.NoError(t, err)
			assert.Equal(t, c.want, f.path)
			assert.Equal(t, c.step, f.step)
		})
	}
}

func TestSearchTakesTheCopyAlreadyLoaded(t *testing.T) {
	wheel := "/usr/lib/python3/dist-packages/nvidia/nccl/lib/libnccl.so.2"
	ff := &fakeFS{files: []string{wheel}, loadable: map[string]bool{wheel: true}, inProc: map[string]bool{"libnccl.so.2": true}}
	f, err := search(ff.fs())
	require.NoError(t, err)
	assert.Equal(t, "already loaded", f.step)
	assert.Empty(t, ff.opened)

	// The override wins even so.
	ff.env = map[string]string{EnvVar: wheel}
	f, err = search(ff.fs())
	require.NoError(t, err)
	assert.Equal(t, "$"+EnvVar, f.step)
	assert.Equal(t, wheel, f.path)
}

func TestOverrideIsStrict(t *testing.T) {
	wheel := "/usr/lib/python3/dist-packages/nvidia/nccl/lib/libnccl.so.2"
	ff := &fakeFS{
		env:      map[string]string{EnvVar: "/opt/nccl/libnccl.so.2"},
		files:    []string{wheel},
		loadable: map[string]bool{wheel: true, "libnccl.so.2": true},
	}
	_, err := search(ff.fs())
	require.Error(t, err)
	assert.True(t, errors.Is(err, backend.ErrCollUnavailable))
	assert.Equal(t, []string{"/opt/nccl/libnccl.so.2"}, ff.opened, "nothing but the override is tried")
	assert.Contains(t, err.Error(), "[$GPUACTOR_NCCL] /opt/nccl/libnccl.so.2")

	// A directory override is searched for the sonames.
	ff = &fakeFS{env: map[string]string{EnvVar: "/opt/nccl"}, files: []string{"/opt/nccl/libnccl.so"}, loadable: map[string]bool{"/opt/nccl/libnccl.so": true}}
	f, err := search(ff.fs())
	require.NoError(t, err)
	assert.Equal(t, "/opt/nccl/libnccl.so", f.path)
}

func TestLoadErrorListsEveryPath(t *testing.T) {
	ff := &fakeFS{env: map[string]string{"VIRTUAL_ENV": "/v", "CONDA_PREFIX": "/c", "PYTHONPATH": "/p1:/p2"},
		files: []string{"/v/lib/python3.12/site-packages/x"}}
	_, err := search(ff.fs())
	var le *LoadError
	require.ErrorAs(t, err, &le)
	var paths []string
	for _, a := range le.Attempts {
		paths = append(paths, a.Path)
	}
	for _, want := range []string{
		"/v/lib/python3.12/site-packages/nvidia/nccl/lib",
		"/p1/nvidia/nccl/lib", "/p2/nvidia/nccl/lib",
		"/usr/lib/python3/dist-packages/nvidia/nccl/lib",
		"/c/lib", "libnccl.so.2", "libnccl.so",
	} {
		assert.Contains(t, paths, want)
		assert.Contains(t, err.Error(), want)
	}
}
