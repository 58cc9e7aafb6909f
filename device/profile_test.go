package device_test

import (
	"bytes"
	"fmt"
	"runtime/pprof"
	"runtime/trace"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/sim"
	"github.com/gpuactor/gpuactor/streams"
)

// The actor goroutine of each device carries its ordinal as a pprof label.
func TestActorGoroutinesCarryTheDevicesLabel(t *testing.T) {
	ctx := testdev.Ctx(t)
	machine := sim.New(sim.WithDevices(testdev.SimDevices))
	devs, err := device.OpenAll(ctx, device.WithSimulator(machine), device.WithKernelCache(""))
	require.NoError(t, err)
	defer func() {
		for _, d := range devs {
			require.NoError(t, d.Close())
		}
	}()
	var out bytes.Buffer
	require.NoError(t, pprof.Lookup("goroutine").WriteTo(&out, 1))
	labels := []string{`"gpuactor.backend":"sim"`}
	for _, d := range devs {
		labels = append(labels, fmt.Sprintf(`"gpuactor.device":"%d"`, d.Ordinal()))
	}
	for _, label := range labels {
		assert.Contains(t, out.String(), label)
	}
}

// A goroutine waiting for a future is in a runtime/trace region while it waits.
func TestAwaitIsATraceRegion(t *testing.T) {
	if trace.IsEnabled() {
		t.Skip("a trace is running already")
	}
	ctx := testdev.Ctx(t)
	dev := testdev.Open(t, ctx, []device.Option{device.WithSimulator(sim.New()), device.WithKernelCache("")})
	s, err := streams.New(ctx, dev)
	require.NoError(t, err)
	defer s.Close(ctx)
	var out bytes.Buffer
	require.NoError(t, trace.Start(&out))
	f := s.HostFunc(ctx, func() { time.Sleep(5 * time.Millisecond) })
	require.NoError(t, f.Wait(ctx))
	trace.Stop()
	assert.Contains(t, out.String(), actor.AwaitRegion)
}
