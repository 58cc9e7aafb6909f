//go:build linux

package worker_test

import (
	"context"
	"runtime"
	"testing"

	"github.com/gpuactor/gpuactor/internal/worker"
)

// BenchmarkCallRoundTrip is one 64-byte request and its 64-byte response, parent to worker
// and back; parallel runs many callers at once.
func BenchmarkCallRoundTrip(b *testing.B) {
	for _, tr := range []struct {
		name string
		opts []worker.Option
	}{
		{"rings", nil},
		{"rings-nospin", []worker.Option{worker.WithRingSpin(0)}},
		{"socket", []worker.Option{worker.WithRingSize(0)}},
	} {
		b.Run(tr.name, func(b *testing.B) { benchRoundTrip(b, start(b, tr.opts...)) })
	}
}

func benchRoundTrip(b *testing.B, p *worker.Process) {
	ctx := context.Background()
	req := make([]byte, 64)
	b.Run("serial", func(b *testing.B) {
		for b.Loop() {
			if _, err := p.Call(ctx, req); err != nil {
				b.Fatal(err)
			}
		}
	})
	// A device's actor calls from a goroutine locked to its thread, which a blocked call's
	// wake costs more than an unlocked one's.
	b.Run("serial-locked", func(b *testing.B) {
		done := make(chan struct{})
		go func() {
			defer close(done)
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			for b.Loop() {
				if _, err := p.Call(ctx, req); err != nil {
					b.Error(err)
					return
				}
			}
		}()
		<-done
	})
	b.Run("parallel", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := p.Call(ctx, req); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}
