package prometheus_test

import (
	"context"
	"fmt"
	"net/http"

	prom "github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	gpuprom "github.com/gpuactor/gpuactor/contrib/prometheus"
	"github.com/gpuactor/gpuactor/device"
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
	http.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	// http.ListenAndServe("127.0.0.1:9090", nil)
	fmt.Println(len(devs) > 0)
	// Output: true
}
