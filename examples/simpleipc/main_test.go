package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/examples/internal/sample"
	"github.com/gpuactor/gpuactor/sim"
)

// TestSimWaives: the simulator shares nothing between processes, so the sample prints the
// C sample's waiver line and ends without error or child processes.
func TestSimWaives(t *testing.T) {
	err := parent(sample.Flags{Backend: "sim"})
	require.ErrorIs(t, err, errWaived)
	_, statErr := os.Stat(shmPath(os.Getpid()))
	require.True(t, os.IsNotExist(statErr), "the slab is removed")
}

// TestChoose: on machines of four and eight GPUs, the devices that take part are those the C
// sample picks: in order, each linked both ways to every one picked before it. The links are
// made up, on simulated devices (whose every pair is linked).
func TestChoose(t *testing.T) {
	for _, n := range []int{4, 8} {
		devs, err := device.OpenAll(context.Background(), device.WithBackend(device.BackendSim), device.WithSimulator(sim.New(sim.WithDevices(n))))
		require.NoError(t, err)
		for _, d := range devs {
			t.Cleanup(func() { require.NoError(t, d.Close()) })
		}
		half := n / 2 // two islands, as two sockets' GPUs without a link between them
		for _, tc := range []struct {
			name string
			link func(a, b int) bool
			want []int
		}{
			{"every pair", func(a, b int) bool { return true }, seq(n)},
			{"two islands", func(a, b int) bool { return (a < half) == (b < half) }, seq(half)},
			{"one way only to the last", func(a, b int) bool { return b != n-1 }, seq(n - 1)},
			{"none", func(a, b int) bool { return false }, []int{0}},
		} {
			t.Run(fmt.Sprintf("%d GPUs, %s", n, tc.name), func(t *testing.T) {
				chosen, err := choose(devs, func(a, b *device.Device) (bool, error) { return tc.link(a.Ordinal(), b.Ordinal()), nil })
				require.NoError(t, err)
				var got []int
				for _, d := range chosen {
					got = append(got, d.Ordinal())
				}
				require.Equal(t, tc.want, got)
			})
		}
		boom := errors.New("boom")
		_, err = choose(devs, func(a, b *device.Device) (bool, error) { return false, boom })
		require.ErrorIs(t, err, boom)
	}
}

// seq is 0, 1, … n-1.
func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}
