package main

import (
	"archive/zip"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// publishModule lays out module path at version, read from the folder dir, in the module proxy
// at proxy (a copy of contrib/prometheus's test helper), as the proxy protocol asks: @v/list, @v/<version>.info, .mod and .zip. The zip
// follows the module zip rules: every file under "<path>@<version>/", folders of nested
// modules and of version control left out. Folders Go never builds from ("." or "_" first,
// testdata) and the build outputs .gitignore names (*.test, *.out) are left out as well, which
// keeps a working tree's leftovers out of the zip.
func publishModule(t *testing.T, proxy, path, version, dir string) {
	t.Helper()
	at := filepath.Join(proxy, filepath.FromSlash(path), "@v")
	require.NoError(t, os.MkdirAll(at, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(at, "list"), []byte(version+"\n"), 0o644))
	info, err := json.Marshal(map[string]any{"Version": version, "Time": time.Now().UTC().Format(time.RFC3339)})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(at, version+".info"), info, 0o644))
	mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(at, version+".mod"), mod, 0o644))

	out, err := os.Create(filepath.Join(at, version+".zip"))
	require.NoError(t, err)
	defer out.Close()
	zw := zip.NewWriter(out)
	prefix := path + "@" + version + "/"
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p == dir {
				return nil
			}
			if strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
				return filepath.SkipDir // a nested module is a module of its own
			}
			return nil
		}
		if !d.Type().IsRegular() || strings.HasSuffix(name, ".test") || strings.HasSuffix(name, ".out") {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		w, err := zw.Create(prefix + filepath.ToSlash(rel))
		if err != nil {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(w, f)
		return err
	})
	require.NoError(t, err)
	require.NoError(t, zw.Close())
}
