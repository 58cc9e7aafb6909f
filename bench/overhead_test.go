package main

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/gpuactor/gpuactor/device"
)

// BenchmarkMemInfo: a cheap runtime call (cudaMemGetInfo) as a message to the actor and back.
// Against BenchmarkDirectMemInfo it isolates the actor's round-trip cost from any GPU work.
func BenchmarkMemInfo(b *testing.B) {
	eachBackend(b, func(b *testing.B, dev *device.Device, _ *device.Kernel) {
		ctx := context.Background()
		for b.Loop() {
			if _, _, err := dev.MemInfo(ctx); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1e3/float64(b.N), "µs/call")
	})
}

// BenchmarkDirectMemInfo: cudaMemGetInfo straight through the binding on a locked thread.
func BenchmarkDirectMemInfo(b *testing.B) {
	dev, _, _ := direct(b)
	for b.Loop() {
		if _, _, err := dev.MemInfo(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1e3/float64(b.N), "µs/call")
}

// BenchmarkHostClock and BenchmarkHostGosched measure what the spin loops pay per poll on
// this host: both are far dearer in some VMs than on bare metal.
func BenchmarkHostClock(b *testing.B) {
	var t time.Time
	for b.Loop() {
		t = time.Now()
	}
	_ = t
}

func BenchmarkHostGosched(b *testing.B) {
	for b.Loop() {
		runtime.Gosched()
	}
}
