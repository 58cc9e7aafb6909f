package cudaerr_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cudaerr"
)

func TestCodesAreComplete(t *testing.T) {
	codes := cudaerr.Codes()
	require.Len(t, codes, 134, "cudaSuccess, the 132 error codes of CUDA 13.0 and ApiFailureBase")
	for i := 1; i < len(codes); i++ {
		require.Less(t, codes[i-1], codes[i], "ascending and unique")
	}
	for _, c := range codes {
		assert.True(t, c.Known())
		assert.NotEmpty(t, c.Message())
		assert.Regexp(t, `^cuda(Success|Error[A-Za-z0-9]+)$`, c.Name())
	}
}

func TestNamesAndMessages(t *testing.T) {
	assert.Equal(t, "cudaErrorMemoryAllocation", cudaerr.MemoryAllocation.Name())
	assert.Equal(t, "memory allocation", cudaerr.MemoryAllocation.Message())
	assert.Equal(t, "ECC uncorrectable", cudaerr.ECCUncorrectable.Message())
	assert.Equal(t, "invalid PTX", cudaerr.InvalidPtx.Message())
	assert.Equal(t, "cudaErrorNoDevice (100): no device", cudaerr.NoDevice.Error())
	assert.Equal(t, "cudaError(12345)", cudaerr.Code(12345).Name())
	assert.False(t, cudaerr.Code(12345).Known())
	assert.Equal(t, int32(700), int32(cudaerr.IllegalAddress))
}

func TestErrorMatching(t *testing.T) {
	assert.NoError(t, cudaerr.New("cudaMalloc", cudaerr.Success))
	err := cudaerr.New("cudaMalloc", cudaerr.MemoryAllocation)
	require.Error(t, err)
	wrapped := fmt.Errorf("allocating the input: %w", err)
	assert.ErrorIs(t, wrapped, cudaerr.MemoryAllocation)
	assert.NotErrorIs(t, wrapped, cudaerr.InvalidValue)
	var ce *cudaerr.Error
	require.ErrorAs(t, wrapped, &ce)
	assert.Equal(t, "cudaMalloc", ce.Op)
	assert.Equal(t, "cudaMalloc: cudaErrorMemoryAllocation (2): memory allocation", err.Error())
	code, ok := cudaerr.CodeOf(wrapped)
	assert.True(t, ok)
	assert.Equal(t, cudaerr.MemoryAllocation, code)
	_, ok = cudaerr.CodeOf(errors.New("plain"))
	assert.False(t, ok)

	withRuntimeText := &cudaerr.Error{Op: "cudaFree", Code: cudaerr.InvalidValue, Message: "invalid argument"}
	assert.Equal(t, "cudaFree: cudaErrorInvalidValue (1): invalid argument", withRuntimeText.Error())
}

func TestSticky(t *testing.T) {
	for _, c := range []cudaerr.Code{cudaerr.IllegalAddress, cudaerr.LaunchFailure, cudaerr.MisalignedAddress, cudaerr.Assert, cudaerr.HardwareStackError} {
		assert.True(t, c.Sticky(), c.Name())
		assert.True(t, cudaerr.IsSticky(fmt.Errorf("x: %w", cudaerr.New("cudaStreamSynchronize", c))))
	}
	for _, c := range []cudaerr.Code{cudaerr.MemoryAllocation, cudaerr.InvalidValue, cudaerr.NotReady, cudaerr.NoDevice, cudaerr.LaunchOutOfResources} {
		assert.False(t, c.Sticky(), c.Name())
	}
	assert.False(t, cudaerr.IsSticky(errors.New("plain")))
}
