// Package prometheus exports gpuactor devices' Stats, and a group's, as Prometheus metrics.
//
// It is a module of its own, so that a program that does not use Prometheus does not inherit
// client_golang through gpuactor. Register one collector: NewGroupCollector for a group
// (package group), which follows the devices the group holds as restarts replace them, or New
// for a fixed set of devices:
//
//	g, _ := group.New(ctx, devs, group.WithRestart(open))
//	prometheus.MustRegister(gpuprom.NewGroupCollector(g))
//
//	devs, _ := device.OpenAll(ctx)
//	prometheus.MustRegister(gpuprom.New(devs))
//
// Every device metric carries the labels device (the ordinal) and backend (as
// Device.Backend names it: cuda or sim); gpuactor_device_info adds isolated. Each scrape
// reads Stats, which takes no lock and never waits for a device's actor, so scraping costs
// the devices nothing and works during and after Close.
package prometheus
