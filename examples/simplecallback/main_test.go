package main

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/examples/internal/sample"
	"github.com/gpuactor/gpuactor/sim"
	"github.com/gpuactor/gpuactor/streams"
)

// quiet keeps the simulated devices' actors from spinning, which the race detector slows.
var quiet = []device.Option{device.WithActorTuning(device.ActorTuning{Spin: device.NoSpin, BusySpin: device.NoSpin, AwaitSpin: device.NoSpin})}

// TestRun runs the sample on the simulator (two devices, and four) with the C sample's sizes,
// and with small workloads of a length that is not a multiple of the block.
func TestRun(t *testing.T) {
	for _, devices := range []int{2, 4} {
		for _, c := range []config{{workloads: 8, n: 100000}, {workloads: 5, n: 1001}} {
			c.Flags = sample.Flags{Backend: "sim"}
			c.opts = append([]device.Option{device.WithSimulator(sim.New(sim.WithDevices(devices)))}, quiet...)
			require.NoError(t, run(c), "%d devices, %d workloads of %d", devices, c.workloads, c.n)
		}
	}
}

// TestCheck checks that the C sample's check (its first elements) decides success, and that
// a wrong element past them fails the workload too.
func TestCheck(t *testing.T) {
	ok, err := check([]int32{4, 5, 6, 7}, 3, 2)
	require.True(t, ok)
	require.NoError(t, err)
	ok, err = check([]int32{4, 5, 6, 0}, 3, 2)
	require.False(t, ok)
	require.ErrorContains(t, err, "element 3 is 0, want 7")
	ok, err = check([]int32{4, 0, 6, 7}, 3, 2)
	require.False(t, ok)
	require.ErrorContains(t, err, "element 1 is 0, want 5")
}

// TestPanickingHostFunc is not in the C sample: a host function that panics fails its
// future with an *actor.PanicError, and the stream goes on with the work queued after it.
func TestPanickingHostFunc(t *testing.T) {
	ctx := context.Background()
	dev, err := device.Open(ctx, 0, append(sample.Options("sim", false), quiet...)...)
	require.NoError(t, err)
	defer func() { require.NoError(t, dev.Close()) }()
	s, err := streams.New(ctx, dev)
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Close(ctx)) }()

	boom := s.HostFunc(ctx, func() { panic("deliberate panic in a host function") })
	ran := false
	after := s.HostFunc(ctx, func() { ran = true })
	_, err = boom.Await(ctx)
	var pe *actor.PanicError
	require.True(t, errors.As(err, &pe), "the panicking host function's future returned %v", err)
	_, err = after.Await(ctx)
	require.NoError(t, err)
	require.True(t, ran)
}

// TestRunFault checks that a device that fails part way ends the run with Failure and an
// error, rather than leaving it waiting for host functions that never run.
func TestRunFault(t *testing.T) {
	for _, at := range []int{1, 5, 10} {
		machine := sim.New(sim.WithDevices(2), sim.WithFaults(1, sim.FaultPlan{StickyAt: at}))
		c := config{workloads: 8, n: 1001, Flags: sample.Flags{Backend: "sim"},
			opts: append([]device.Option{device.WithSimulator(machine)}, quiet...)}
		require.Error(t, run(c), "sticky fault at operation %d", at)
	}
}
