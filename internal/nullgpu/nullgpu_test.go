package nullgpu

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// TestLaunchesAreDoneAtOnce: a launch on the null GPU is accepted and its stream and a
// watermark after it report done at once; the rest is the simulator's, bad handles included.
func TestLaunchesAreDoneAtOnce(t *testing.T) {
	be := New()
	d, err := be.Open(0)
	require.NoError(t, err)
	ran := false
	m, err := d.LoadModule(backend.ModuleSpec{SimKernels: map[string]cuda.SimKernel{"k": func(*cuda.KernelCall) error {
		ran = true
		return nil
	}}})
	require.NoError(t, err)
	k, err := d.ModuleKernel(m, "k")
	require.NoError(t, err)
	s, err := d.StreamCreate(backend.StreamNonBlocking, 0)
	require.NoError(t, err)
	ev, err := d.EventCreate(backend.EventDisableTiming)
	require.NoError(t, err)
	require.NoError(t, d.Launch(k, cuda.Dim(1), cuda.Dim(1), 0, s, nil))
	require.NoError(t, d.EventRecord(ev, s))
	require.NoError(t, d.EventQuery(ev))
	require.NoError(t, d.StreamQuery(s))
	require.NoError(t, d.StreamSynchronize(s))
	require.False(t, ran, "the null GPU runs no kernel")
	require.Error(t, d.StreamDestroy(s+12345), "a bad handle is still the simulator's error")
}
