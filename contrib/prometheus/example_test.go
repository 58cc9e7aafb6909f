package prometheus_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	prom "github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	gpuprom "github.com/gpuactor/gpuactor/contrib/prometheus"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/group"
	"github.com/gpuactor/gpuactor/sim"
)

// Serve every device's Stats on /metrics.
func Example() {
	ctx := context.Background()
	devs, err := device.OpenAll(ctx, device.WithSimulator(sim.New()))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() {
		for _, d := range devs {
			_ = d.Close()
		}
	}()
	reg := prom.NewRegistry()
	reg.MustRegister(gpuprom.New(devs))
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	// http.ListenAndServe("127.0.0.1:9090", mux)
	fmt.Println(scrape(mux, "gpuactor_up{"))
	// Output:
	// gpuactor_up{backend="sim",device="0"} 1
	// gpuactor_up{backend="sim",device="1"} 1
}

// Serve a group's metrics on /metrics: the devices it holds now, with their jobs, restarts
// and health, and its jobs waiting for a device.
func ExampleNewGroupCollector() {
	ctx := context.Background()
	devs, err := device.OpenAll(ctx, device.WithSimulator(sim.New()))
	if err != nil {
		fmt.Println(err)
		return
	}
	g, err := group.New(ctx, devs)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() {
		_ = g.Close(ctx) // before the devices
		for _, d := range devs {
			_ = d.Close()
		}
	}()
	reg := prom.NewRegistry()
	reg.MustRegister(gpuprom.NewGroupCollector(g))
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	fmt.Println(scrape(mux, "gpuactor_group_healthy{", "gpuactor_group_jobs_waiting "))
	// Output:
	// gpuactor_group_healthy{backend="sim",device="0"} 1
	// gpuactor_group_healthy{backend="sim",device="1"} 1
	// gpuactor_group_jobs_waiting 0
}

// scrape gets /metrics from h and returns its lines that start with one of prefixes.
func scrape(h http.Handler, prefixes ...string) string {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	var out []string
	for _, line := range strings.Split(rec.Body.String(), "\n") {
		for _, p := range prefixes {
			if strings.HasPrefix(line, p) {
				out = append(out, line)
			}
		}
	}
	return strings.Join(out, "\n")
}
