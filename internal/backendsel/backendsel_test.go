package backendsel_test

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/gpuactor/gpuactor/internal/backendsel"
	"github.com/gpuactor/gpuactor/internal/sim"
)

func TestSelect(t *testing.T) {
	m := sim.NewMachine(sim.Spec{Devices: 3})
	be, kind, got, err := backendsel.Select(backendsel.Sim, m, zap.NewNop())
	require.NoError(t, err)
	assert.Equal(t, backendsel.Sim, kind)
	assert.Same(t, m, got)
	assert.Same(t, m.Backend(), be)

	_, kind, got, err = backendsel.Select(backendsel.Sim, nil, zap.NewNop())
	require.NoError(t, err)
	assert.Equal(t, backendsel.Sim, kind)
	require.NotNil(t, got, "a default machine")

	_, _, _, err = backendsel.Select("tpu", nil, zap.NewNop())
	require.ErrorIs(t, err, backendsel.ErrBackend)
	require.ErrorContains(t, err, `"tpu"`)
}

// The spec a parent puts in a worker's environment opens the same machine there, once.
func TestWorkerSpecCrosses(t *testing.T) {
	spec := backendsel.WorkerSpec{Backend: backendsel.Sim, Sim: &sim.Spec{Devices: 3, Faults: map[int]sim.FaultPlan{1: {StickyAt: 7}}}}
	env, err := spec.Env()
	require.NoError(t, err)
	k, v, ok := strings.Cut(env, "=")
	require.True(t, ok)
	require.Equal(t, backendsel.EnvWorker, k)
	t.Setenv(k, v)
	be, err := backendsel.WorkerBackend()
	require.NoError(t, err)
	n, err := be.DeviceCount()
	require.NoError(t, err)
	assert.Equal(t, 3, n)
	_, set := os.LookupEnv(backendsel.EnvWorker)
	assert.False(t, set, "unset: the worker's children are not workers")
	_, err = backendsel.WorkerBackend()
	require.ErrorContains(t, err, backendsel.EnvWorker+" is not set")
}

// GPUACTOR_SIM_DEVICES sets the default machine's device count; a bad value is an error that
// names the variable, not a machine of some other size.
func TestDefaultMachineFromTheEnvironment(t *testing.T) {
	t.Setenv(backendsel.EnvSimDevices, "")
	m, err := backendsel.DefaultMachine()
	require.NoError(t, err)
	n, err := m.Backend().DeviceCount()
	require.NoError(t, err)
	assert.Equal(t, sim.DefaultDevices, n)

	t.Setenv(backendsel.EnvSimDevices, "5")
	_, _, m, err = backendsel.Select(backendsel.Sim, nil, zap.NewNop())
	require.NoError(t, err)
	n, err = m.Backend().DeviceCount()
	require.NoError(t, err)
	assert.Equal(t, 5, n)

	for _, bad := range []string{"0", "x", "1025", "2.5"} {
		t.Setenv(backendsel.EnvSimDevices, bad)
		_, _, _, err := backendsel.Select(backendsel.Sim, nil, zap.NewNop())
		require.ErrorIs(t, err, backendsel.ErrBackend, bad)
		require.ErrorContains(t, err, backendsel.EnvSimDevices+`="`+bad+`"`)
	}
}
