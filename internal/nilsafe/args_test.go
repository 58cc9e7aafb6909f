package nilsafe

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/graphs"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/sim"
	"github.com/gpuactor/gpuactor/streams"
)

// A nil stream or event given to a function or to a method of a live handle is refused with
// an ErrInvalidArgument error naming it, never a panic, and the device stays usable.
func TestNilStreamAndEventArguments(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dev, err := device.Open(ctx, 0, device.WithSimulator(sim.New()))
	require.NoError(t, err)
	defer func() { require.NoError(t, dev.Close()) }()
	s := streams.Default(dev)
	buf, err := dev.MallocBytes(ctx, 64)
	require.NoError(t, err)
	ev, err := streams.NewEvent(ctx, dev)
	require.NoError(t, err)
	managed, err := alloc.MallocManaged[float32](ctx, dev, 16)
	require.NoError(t, err)
	g, err := graphs.New(ctx, dev)
	require.NoError(t, err)
	_, err = g.AddMemset(ctx, nil, buf, 0)
	require.NoError(t, err)
	x, err := g.Instantiate(ctx)
	require.NoError(t, err)

	var nilStream *streams.Stream
	var nilEvent *streams.Event
	futures := map[string]func() *streams.Future{
		"Stream.Record(nil event)": func() *streams.Future { return s.Record(ctx, nilEvent) },
		"Stream.Wait(nil event)":   func() *streams.Future { return s.Wait(ctx, nilEvent) },
		"Event.Record(nil stream)": func() *streams.Future { return ev.Record(ctx, nilStream) },
		"CopyToDevice":             func() *streams.Future { return streams.CopyToDevice(ctx, nilStream, buf, []float32{1}) },
		"CopyFromDevice":           func() *streams.Future { return streams.CopyFromDevice(ctx, nilStream, []float32{1}, buf) },
		"Exec.Launch":              func() *streams.Future { return x.Launch(ctx, nilStream) },
		"Exec.LaunchN":             func() *streams.Future { return x.LaunchN(ctx, nilStream, 2) },
		"Managed.Prefetch":         func() *streams.Future { return managed.Prefetch(ctx, nilStream, alloc.Host()) },
		"Managed.PrefetchRange":    func() *streams.Future { return managed.PrefetchRange(ctx, nilStream, 0, 1, alloc.Host()) },
		"Managed.Attach":           func() *streams.Future { return managed.Attach(ctx, nilStream, alloc.AttachGlobal) },
	}
	errs := map[string]func() error{
		"MallocAsync": func() error { _, _, err := alloc.MallocAsync[float32](ctx, nilStream, 4); return err },
		"Malloc":      func() error { _, err := alloc.Malloc[float32](ctx, nilStream, 4); return err },
		"BeginCapture": func() error {
			_, err := graphs.BeginCapture(ctx, nilStream)
			return err
		},
		"Capture": func() error {
			_, err := graphs.Capture(ctx, nilStream, func(context.Context) error { return nil })
			return err
		},
		"Status": func() error { _, err := graphs.Status(ctx, nilStream); return err },
		"Record": func() error {
			_, err := graphs.Record(ctx, nilStream, func(context.Context, *graphs.Recorder) error { return nil })
			return err
		},
		"Elapsed":              func() error { _, err := streams.Elapsed(ctx, nilEvent, ev); return err },
		"Graph.AddEventRecord": func() error { _, err := g.AddEventRecord(ctx, nil, nilEvent); return err },
		"Graph.AddEventWait":   func() error { _, err := g.AddEventWait(ctx, nil, nilEvent); return err },
		"Instantiate(Upload(nil))": func() error {
			x2, err := g.Instantiate(ctx, graphs.Upload(nilStream))
			if err == nil {
				return x2.Close(ctx) // nil means no upload: allowed
			}
			return err
		},
	}
	check := func(t *testing.T, err error) {
		t.Helper()
		require.Error(t, err)
		assert.ErrorIs(t, err, device.ErrInvalidArgument)
		assert.Contains(t, err.Error(), "nil")
	}
	for name, fn := range futures {
		t.Run(name, func(t *testing.T) {
			var f *streams.Future
			require.NotPanics(t, func() { f = fn() })
			require.NotNil(t, f)
			check(t, f.Wait(ctx))
		})
	}
	for name, fn := range errs {
		t.Run(name, func(t *testing.T) {
			var err error
			require.NotPanics(t, func() { err = fn() })
			if name == "Instantiate(Upload(nil))" && err == nil {
				return
			}
			check(t, err)
		})
	}
	testdev.RequireUsable(t, dev)
}
