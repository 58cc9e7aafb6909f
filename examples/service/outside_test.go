package main

import (
	"io/fs"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The service copied out of the repository, without its go.work, builds against the gpuactor
// modules at the version its go.mod requires, served by a module proxy made from this tree,
// and runs: it imports nothing of the repository's but the published modules.
func TestCopiedOutOfTheRepository(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	if testing.Short() {
		t.Skip("builds the core and the Prometheus client from scratch")
	}
	mod, err := os.ReadFile("go.mod")
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^\s*(?:require\s+)?github\.com/gpuactor/gpuactor (v\S+)`).FindSubmatch(mod)
	require.NotNil(t, m, "go.mod does not require github.com/gpuactor/gpuactor")
	version := string(m[1])
	require.NotRegexp(t, `(?m)^replace `, string(mod), "a replace in go.mod is ignored outside the repository")

	tmp := t.TempDir()
	proxy := filepath.Join(tmp, "proxy")
	publishModule(t, proxy, "github.com/gpuactor/gpuactor", version, filepath.Join("..", ".."))
	publishModule(t, proxy, "github.com/gpuactor/gpuactor/contrib/prometheus", version, filepath.Join("..", "..", "contrib", "prometheus"))

	// The folder as a user copies it: its Go files (tests left out), go.mod and go.sum.
	app := filepath.Join(tmp, "service")
	require.NoError(t, os.MkdirAll(app, 0o755))
	files, err := fs.Glob(os.DirFS("."), "*")
	require.NoError(t, err)
	for _, f := range files {
		if f == "go.work" || f == "go.work.sum" || strings.HasSuffix(f, "_test.go") || !(strings.HasSuffix(f, ".go") || strings.HasPrefix(f, "go.")) {
			continue
		}
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		require.NotContains(t, string(b), "gpuactor/examples/internal", f)
		require.NoError(t, os.WriteFile(filepath.Join(app, f), b, 0o644))
	}

	cache, err := exec.Command(goBin, "env", "GOMODCACHE").Output()
	require.NoError(t, err)
	proxies := []string{fileURL(proxy), fileURL(filepath.Join(strings.TrimSpace(string(cache)), "cache", "download"))}
	if p, err := exec.Command(goBin, "env", "GOPROXY").Output(); err == nil {
		if s := strings.TrimSpace(string(p)); s != "" && s != "off" {
			proxies = append(proxies, s) // only for what the local cache lacks
		}
	}
	env := append(os.Environ(),
		"GOWORK=off", "GOTOOLCHAIN=local", "CGO_ENABLED=0",
		"GOFLAGS=-mod=mod -modcacherw -trimpath",
		"GOPROXY="+strings.Join(proxies, ","), "GOSUMDB=off", "GONOSUMDB=github.com/gpuactor",
		"GOMODCACHE="+filepath.Join(tmp, "modcache"), // the made-up release stays out of the real cache
	)
	build := exec.Command(goBin, "build", "-o", filepath.Join(tmp, "service.bin"), ".")
	build.Dir, build.Env = app, env
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)

	run := exec.Command(filepath.Join(tmp, "service.bin"), "-sim", "2", "-load", "-clients", "2", "-duration", "200ms", "-park")
	run.Env = os.Environ()
	out, err = run.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "PASS")
}

// fileURL is a file:// URL for a local folder, the form GOPROXY takes.
func fileURL(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String()
}
