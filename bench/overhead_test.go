package main

import (
	"context"
	"fmt"
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
	dev, _, _ := directOn(b)
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

// BenchmarkDirectMallocFree: cudaMalloc + cudaFree of 1 MiB straight through the binding, and
// with the stream synchronize that Buffer.Free does first: together with the suite's
// malloc_free row they show where an allocation's time goes.
func BenchmarkDirectMallocFree(b *testing.B) {
	for _, withSync := range []bool{false, true} {
		b.Run(fmt.Sprintf("sync=%v", withSync), func(b *testing.B) {
			dev, _, s := directOn(b)
			for b.Loop() {
				p, err := dev.Malloc(1 << 20)
				if err != nil {
					b.Fatal(err)
				}
				if withSync {
					if err := dev.StreamSynchronize(s); err != nil {
						b.Fatal(err)
					}
				}
				if err := dev.Free(p); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1e3/float64(b.N), "µs/pair")
		})
	}
}

// BenchmarkMallocFree: the same pair through the device actor.
func BenchmarkMallocFree(b *testing.B) {
	eachBackend(b, func(b *testing.B, dev *device.Device, _ *device.Kernel) {
		ctx := context.Background()
		for b.Loop() {
			buf, err := dev.MallocBytes(ctx, 1<<20)
			if err != nil {
				b.Fatal(err)
			}
			if err := buf.Close(ctx); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1e3/float64(b.N), "µs/pair")
	})
}
