package group_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/group"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/streams"
)

// BenchmarkRoundTrip: a trivial job (an empty kernel's launch, awaited) sent straight to
// a stream, and the same job through a group of that device with one stream: the difference is
// what the group adds to each job: "group" submits and waits, "do" calls Do, which runs the job
// on the caller's goroutine when a stream is free. On the GPU when there is one, else on the
// simulator.
func BenchmarkRoundTrip(b *testing.B) {
	ctx := context.Background()
	opts := []device.Option{device.WithBackend(device.BackendSim)}
	if testdev.GPU() {
		opts = []device.Option{device.WithBackend(device.BackendCUDA)}
	}
	dev, err := device.Open(ctx, 0, opts...)
	require.NoError(b, err)
	defer dev.Close()
	mod, err := dev.Compile(ctx, device.Source{Name: "empty.cu", Code: `extern "C" __global__ void empty() {}`,
		Sim: map[string]cuda.SimKernel{"empty": func(*cuda.KernelCall) error { return nil }}})
	require.NoError(b, err)
	empty, err := mod.Kernel(ctx, "empty")
	require.NoError(b, err)
	one := cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(1)}
	work := func(ctx context.Context, _ *device.Device, s *streams.Stream) error {
		return s.Launch(ctx, empty, one).Wait(ctx)
	}
	b.Run("stream", func(b *testing.B) {
		s, err := streams.New(ctx, dev)
		require.NoError(b, err)
		defer s.Close(ctx)
		for b.Loop() {
			if err := work(ctx, dev, s); err != nil {
				b.Fatal(err)
			}
		}
	})
	// handoff: the same job run by another goroutine, handed over on a channel and answered
	// through a promise: the group's hand-offs alone, without its queue and placement.
	b.Run("handoff", func(b *testing.B) {
		s, err := streams.New(ctx, dev)
		require.NoError(b, err)
		defer s.Close(ctx)
		jobs := make(chan *actor.Promise[struct{}])
		defer close(jobs)
		go func() {
			for p := range jobs {
				p.Complete(struct{}{}, work(ctx, dev, s))
			}
		}()
		for b.Loop() {
			p := actor.NewPromise[struct{}]()
			jobs <- p
			if err := p.Future().Wait(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	// nop: a job that does nothing, through the group: the group's own cost.
	b.Run("group-nop", func(b *testing.B) {
		g, err := group.New(ctx, []*device.Device{dev}, group.WithStreams(1))
		require.NoError(b, err)
		defer g.Close(context.Background())
		nop := func(context.Context, *device.Device, *streams.Stream) error { return nil }
		for b.Loop() {
			if err := g.Submit(ctx, nop).Wait(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("do", func(b *testing.B) {
		g, err := group.New(ctx, []*device.Device{dev}, group.WithStreams(1))
		require.NoError(b, err)
		defer g.Close(context.Background())
		for b.Loop() {
			if err := g.Do(ctx, work); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("group", func(b *testing.B) {
		g, err := group.New(ctx, []*device.Device{dev}, group.WithStreams(1))
		require.NoError(b, err)
		defer g.Close(context.Background())
		for b.Loop() {
			if err := g.Submit(ctx, work).Wait(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkPipe: items through Pipe, in completion and in input order, against the same jobs
// started with Go and awaited with Wait: what the channels, the window and the reordering add
// per item. Four simulated devices of two streams each; the job is a host function on its
// stream.
func BenchmarkPipe(b *testing.B) {
	ctx := context.Background()
	g := newGroup(b, openSims(b, 4), group.WithStreams(2))
	job := func(ctx context.Context, _ *device.Device, s *streams.Stream, _ int) (struct{}, error) {
		return struct{}{}, s.HostFunc(ctx, func() {}).Wait(ctx)
	}
	b.Run("go", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			g.Go(ctx, func(ctx context.Context, d *device.Device, s *streams.Stream) error {
				_, err := job(ctx, d, s, i)
				return err
			})
		}
		require.NoError(b, g.Wait())
	})
	for _, ordered := range []bool{false, true} {
		name, opts := "completion", []group.PipeOption(nil)
		if ordered {
			name, opts = "ordered", []group.PipeOption{group.Ordered()}
		}
		b.Run(name, func(b *testing.B) {
			in := make(chan int)
			out := group.Pipe(ctx, g, in, job, opts...)
			go func() {
				defer close(in)
				for i := range b.N {
					in <- i
				}
			}()
			for r := range out {
				if r.Err != nil {
					b.Fatal(r.Err)
				}
			}
		})
	}
}
