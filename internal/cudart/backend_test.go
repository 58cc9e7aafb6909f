package cudart

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

func TestBackendBasics(t *testing.T) {
	rt := mustLoad(t)
	b := NewBackend(rt)
	assert.Equal(t, "cuda", b.Name())
	assert.Same(t, rt, b.Runtime())
	v, err := b.RuntimeVersion()
	require.NoError(t, err)
	assert.GreaterOrEqual(t, v, 11000)
}

func TestBackendWithoutGPU(t *testing.T) {
	if hasGPU() {
		t.Skip("a GPU is usable here")
	}
	b := NewBackend(mustLoad(t))
	_, err := b.DeviceCount()
	assert.True(t, errors.Is(err, cudaerr.InsufficientDriver) || errors.Is(err, cudaerr.NoDevice), "got %v", err)
	dev, err := b.Open(0)
	assert.Nil(t, dev)
	assert.True(t, errors.Is(err, cudaerr.InsufficientDriver) || errors.Is(err, cudaerr.NoDevice) ||
		errors.Is(err, cudaerr.InvalidDevice), "got %v", err)
}

// Handles the backend did not hand out are errors, not crashes in the driver.
func TestBackendUnknownHandles(t *testing.T) {
	b := NewBackend(mustLoad(t))
	d := &device{b: b, rt: b.rt}
	one := backend.Dim3{X: 1, Y: 1, Z: 1}
	err := d.Launch(backend.Kernel(0x1234), one, one, 0, 0, []backend.Arg{{Kind: backend.ArgInt32, Bits: 1}})
	assert.ErrorIs(t, err, cudaerr.InvalidResourceHandle)
	_, err = d.ModuleKernel(backend.Module(0x1234), "k")
	assert.ErrorIs(t, err, cudaerr.InvalidResourceHandle)
	assert.ErrorIs(t, d.UnloadModule(backend.Module(0x1234)), cudaerr.InvalidResourceHandle)
}
