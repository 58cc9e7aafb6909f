package cudart

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// Without a GPU the device-management calls that need no open device fail cleanly, and flags
// outside the mask are refused before the runtime is asked.
func TestDeviceManagementWithoutGPU(t *testing.T) {
	if hasGPU() {
		t.Skip("a GPU is usable here")
	}
	b := NewBackend(mustLoad(t))
	noDriver := func(err error) bool {
		return errors.Is(err, cudaerr.InsufficientDriver) || errors.Is(err, cudaerr.NoDevice) ||
			errors.Is(err, cudaerr.InvalidDevice) || errors.Is(err, ErrSymbolNotFound)
	}

	_, err := b.OpenWithFlags(0, 0x100)
	require.ErrorIs(t, err, cudaerr.InvalidValue)
	assert.Contains(t, err.Error(), "0x100")

	_, err = b.OpenWithFlags(0, backend.DeviceScheduleBlockingSync)
	require.Error(t, err)
	assert.True(t, noDriver(err), "got %v", err)

	_, err = b.DeviceByPCIBusID("0000:65:00.0")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "cudaDeviceGetByPCIBusId")

	_, err = b.rt.DeviceGetLimit(backend.LimitStackSize)
	assert.True(t, noDriver(err), "got %v", err)
	assert.Equal(t, "cudaErrorMemoryAllocation", b.ErrorName(cudaerr.MemoryAllocation))
	assert.Equal(t, "out of memory", b.ErrorString(cudaerr.MemoryAllocation))
}

// Two flag sets are the same for a context that exists when their scheduling and memop bits
// are: mapped host memory and local-memory resizing tell nothing apart.
func TestSameContextFlags(t *testing.T) {
	assert.True(t, sameContextFlags(backend.DeviceMapHost, 0))
	assert.True(t, sameContextFlags(backend.DeviceMapHost|backend.DeviceLmemResizeToMax|backend.DeviceScheduleSpin, backend.DeviceScheduleSpin))
	assert.False(t, sameContextFlags(backend.DeviceScheduleBlockingSync, backend.DeviceScheduleAuto))
	assert.False(t, sameContextFlags(backend.DeviceSyncMemops, 0))
}
