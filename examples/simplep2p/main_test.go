package main

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/examples/internal/sample"
	"github.com/gpuactor/gpuactor/sim"
)

// TestRun runs the sample on a simulated machine of two GPUs, linked as every simulated pair
// is.
func TestRun(t *testing.T) {
	c := config{Flags: sample.Flags{Backend: "sim"}, sim: sim.New(sim.WithDevices(2))}
	require.NoError(t, run(c, "simplep2p"))
}

// TestWaived: one GPU is not enough; the sample waives, as the C sample does.
func TestWaived(t *testing.T) {
	c := config{Flags: sample.Flags{Backend: "sim"}, sim: sim.New(sim.WithDevices(1))}
	require.ErrorIs(t, run(c, "simplep2p"), errWaived)
}

// TestFirstPeerPair: on machines of four and eight GPUs, the pair the sample runs on is the
// first, in the C sample's order, whose first GPU can access the second, whatever links the
// machine has: the search alone, with links made up (every simulated pair is linked, and the
// whole sample on four simulated GPUs would copy as much as on two, for nothing new).
func TestFirstPeerPair(t *testing.T) {
	for _, n := range []int{4, 8} {
		devs, err := device.OpenAll(context.Background(), device.WithBackend(device.BackendSim), device.WithSimulator(sim.New(sim.WithDevices(n))))
		require.NoError(t, err)
		for _, d := range devs {
			t.Cleanup(func() { require.NoError(t, d.Close()) })
		}
		for _, tc := range []struct {
			name string
			link func(a, b int) bool
			want []int // the pair's ordinals, nil for none
		}{
			{"every pair", func(a, b int) bool { return true }, []int{0, 1}},
			{"GPU0 alone", func(a, b int) bool { return a != 0 && b != 0 }, []int{1, 2}},
			{"the last two, one way", func(a, b int) bool { return a == n-1 && b == n-2 }, []int{n - 1, n - 2}},
			{"none", func(a, b int) bool { return false }, nil},
		} {
			t.Run(fmt.Sprintf("%d GPUs, %s", n, tc.name), func(t *testing.T) {
				asked := 0
				pair, err := firstPeerPair(devs, func(a, b *device.Device) (bool, error) {
					asked++
					return tc.link(a.Ordinal(), b.Ordinal()), nil
				})
				require.NoError(t, err)
				require.Equal(t, n*(n-1), asked, "every ordered pair is asked and printed, as the C sample does")
				var got []int
				for _, d := range pair {
					got = append(got, d.Ordinal())
				}
				require.Equal(t, tc.want, got)
			})
		}
		boom := errors.New("boom")
		_, err = firstPeerPair(devs, func(a, b *device.Device) (bool, error) { return false, boom })
		require.ErrorIs(t, err, boom)
	}
}

// TestVerify checks the pass condition and that it stops counting after a dozen errors.
func TestVerify(t *testing.T) {
	h := make([]float32, 3*4096)
	for i := range h {
		h[i] = float32(i%4096) * 4
	}
	require.Zero(t, verify(h))
	h[5] = 1
	require.Equal(t, 1, verify(h))
	for i := range 100 {
		h[i] = -1
	}
	require.Equal(t, 12, verify(h))
}
