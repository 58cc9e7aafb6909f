package device_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/device"
)

// Every code of cudaerr's table gets a name and a description from the loaded runtime: the
// simulator's, and the real libcudart's where one is installed (no GPU needed). A runtime
// older than the table does not know its newest codes, and says so.
func TestErrorTextOfEveryCode(t *testing.T) {
	ctx := context.Background()
	for _, c := range cudaerr.Codes() {
		name, text, err := device.ErrorText(ctx, c, device.WithBackend(device.BackendSim))
		require.NoError(t, err)
		assert.Equal(t, c.Name(), name)
		assert.NotEmpty(t, text, c.Name())
	}
	_, _, err := device.ErrorText(ctx, 0, device.WithBackend(device.BackendCUDA))
	if err != nil {
		t.Logf("no libcudart here (%v): the cuda half is skipped", err)
		return
	}
	known := 0
	for _, c := range cudaerr.Codes() {
		name, text, err := device.ErrorText(ctx, c, device.WithBackend(device.BackendCUDA))
		require.NoError(t, err)
		if text == "unrecognized error code" {
			continue
		}
		known++
		assert.Equal(t, c.Name(), name, "code %d", int32(c))
		assert.NotEmpty(t, text)
	}
	assert.Greater(t, known, 100, "even CUDA 11.8 knows most codes")
	name, text, err := device.ErrorText(ctx, cudaerr.MemoryAllocation, device.WithBackend(device.BackendCUDA))
	require.NoError(t, err)
	assert.Equal(t, "cudaErrorMemoryAllocation", name)
	assert.Equal(t, "out of memory", text)
}
