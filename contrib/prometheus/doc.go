// Package prometheus exports gpuactor devices' Stats as Prometheus metrics.
//
// It is a module of its own, so that a program that does not use Prometheus does not inherit
// client_golang through gpuactor. Register one Collector for the devices a program opened:
//
//	devs, _ := device.OpenAll(ctx)
//	prometheus.MustRegister(gpuprom.New(devs...))
//
// Each scrape reads every device's Stats, which takes no lock and never waits for a device's
// actor, so scraping costs the devices nothing and works during and after Close.
package prometheus
