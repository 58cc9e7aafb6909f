package main

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/device"
)

// TestSkippedRowIsANoteNotAFailure: a row that cannot run on the machine leaves a note and
// neither a result nor an error.
func TestSkippedRowIsANoteNotAFailure(t *testing.T) {
	rep := &Report{}
	s := scenario{name: "peer_copy", unit: "GB/s", run: func(*env, int64, int) (float64, *float64, error) {
		return 0, nil, fmt.Errorf("%w: needs two GPUs", errSkipped)
	}}
	runTask(nil, device.BackendSim, task{s: s}, 0, 1, rep, &progress{})
	require.Empty(t, rep.Results)
	require.Empty(t, rep.Errors)
	require.Len(t, rep.Skipped, 1)
	require.Contains(t, rep.Skipped[0], "peer_copy: not run on this machine: needs two GPUs")
}

// TestPeerRowSkipsOnSeparateSimulators: the bench opens each simulated device as a machine of
// its own, so the peer row notes why it cannot run there.
func TestPeerRowSkipsOnSeparateSimulators(t *testing.T) {
	o, err := parseFlags([]string{"-backend", "sim", "-scenarios", "peer_copy", "-repeat", "1"})
	require.NoError(t, err)
	rep := &Report{}
	e, closeEnv, err := openEnv(t.Context(), o, device.BackendSim, device.WaiterQueryDefault, rep)
	require.NoError(t, err)
	defer closeEnv()
	_, _, err = peerBandwidth(e, 1<<20, 1)
	require.ErrorIs(t, err, errSkipped)
	require.ErrorContains(t, err, "peer_copy runs on GPUs only")
	require.NotContains(t, err.Error(), "different backends", "an expected skip does not read like a fault")
}
