package prometheus_test

import (
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

// outsideMain is a program in a module of its own: it imports the collector and the core as a
// user would and gathers the metrics of a simulated device.
const outsideMain = `package main

import (
	"context"
	"fmt"

	prom "github.com/prometheus/client_golang/prometheus"

	gpuprom "github.com/gpuactor/gpuactor/contrib/prometheus"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/sim"
)

func main() {
	dev, err := device.Open(context.Background(), 0, device.WithSimulator(sim.New()))
	if err != nil {
		panic(err)
	}
	defer dev.Close()
	reg := prom.NewRegistry()
	reg.MustRegister(gpuprom.New([]*device.Device{dev}))
	families, err := reg.Gather()
	if err != nil {
		panic(err)
	}
	fmt.Println("backend:", dev.Backend(), "metric families:", len(families) > 0)
}
`

// A module outside the repository, with no replace and no workspace, builds and runs against
// the collector and the core at the version this module requires, served by a module proxy
// made from this tree; third-party modules come from the local module cache, so it works
// offline. That is what `go get github.com/gpuactor/gpuactor/contrib/prometheus` gives a user.
func TestUsableFromAModuleOutsideTheRepository(t *testing.T) {
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
	publishModule(t, proxy, "github.com/gpuactor/gpuactor/contrib/prometheus", version, ".")

	cache, err := exec.Command(goBin, "env", "GOMODCACHE").Output()
	require.NoError(t, err)
	proxies := []string{fileURL(proxy), fileURL(filepath.Join(strings.TrimSpace(string(cache)), "cache", "download"))}
	if p, err := exec.Command(goBin, "env", "GOPROXY").Output(); err == nil {
		if s := strings.TrimSpace(string(p)); s != "" && s != "off" {
			proxies = append(proxies, s) // only for what the local cache lacks
		}
	}

	app := filepath.Join(tmp, "app")
	require.NoError(t, os.MkdirAll(app, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(app, "go.mod"), []byte("module example.com/app\n\ngo 1.26.0\n\n"+
		"require github.com/gpuactor/gpuactor/contrib/prometheus "+version+"\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(app, "main.go"), []byte(outsideMain), 0o644))

	cmd := exec.Command(goBin, "run", ".")
	cmd.Dir = app
	cmd.Env = append(os.Environ(),
		"GOWORK=off", "GOTOOLCHAIN=local", "CGO_ENABLED=0",
		// -trimpath keeps the temporary module cache's path out of the build cache's keys, so a
		// second run compiles nothing; -modcacherw lets the test remove that cache.
		"GOFLAGS=-mod=mod -modcacherw -trimpath",
		"GOPROXY="+strings.Join(proxies, ","), "GOSUMDB=off", "GONOSUMDB=github.com/gpuactor",
		"GOMODCACHE="+filepath.Join(tmp, "modcache"), // the made-up release stays out of the real cache
	)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "backend: sim metric families: true")

	gomod, err := os.ReadFile(filepath.Join(app, "go.mod"))
	require.NoError(t, err)
	assert.Contains(t, string(gomod), "github.com/gpuactor/gpuactor "+version, "the core comes at the version the collector requires")
}

// fileURL is a file:// URL for a local folder, the form GOPROXY takes.
func fileURL(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String()
}
