package cudart

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cudaerr"
)

// cudaGetErrorName/String work without a driver.
func TestErrorNamesAndMessages(t *testing.T) {
	rt := mustLoad(t)
	assert.Equal(t, "cudaErrorMemoryAllocation", rt.ErrorName(cudaerr.MemoryAllocation))
	assert.Equal(t, "out of memory", rt.ErrorString(cudaerr.MemoryAllocation))
	assert.Equal(t, "cudaErrorInsufficientDriver", rt.ErrorName(cudaerr.InsufficientDriver))
	assert.Contains(t, rt.ErrorString(cudaerr.InsufficientDriver), "driver")
	assert.Equal(t, "cudaErrorNotReady", rt.ErrorName(cudaerr.NotReady))
	assert.Equal(t, "device not ready", rt.ErrorString(cudaerr.NotReady))
	assert.Equal(t, "cudaErrorIllegalAddress", rt.ErrorName(cudaerr.IllegalAddress))
	assert.Equal(t, "cudaSuccess", rt.ErrorName(cudaerr.Success))

	// Every code the runtime knows maps to the same name in cudaerr.
	for _, c := range cudaerr.Codes() {
		if name := rt.ErrorName(c); name != "cudaErrorUnknown" || c == cudaerr.Unknown {
			if rt.ErrorString(c) != "unrecognized error code" {
				assert.Equal(t, c.Name(), name, "code %d", int32(c))
			}
		}
	}
}

func TestErrorValues(t *testing.T) {
	rt := mustLoad(t)
	err := rt.ErrorFor("cudaMalloc", cudaerr.MemoryAllocation)
	require.Error(t, err)
	assert.ErrorIs(t, err, cudaerr.MemoryAllocation)
	assert.NotErrorIs(t, err, cudaerr.InvalidValue)
	var ce *cudaerr.Error
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "cudaMalloc", ce.Op)
	assert.Equal(t, cudaerr.MemoryAllocation, ce.Code)
	assert.Equal(t, "out of memory", ce.Message)
	assert.Equal(t, "cudaMalloc: cudaErrorMemoryAllocation (2): out of memory", err.Error())
	assert.NoError(t, rt.ErrorFor("cudaMalloc", cudaerr.Success))
	assert.True(t, cudaerr.IsSticky(rt.ErrorFor("cudaStreamSynchronize", cudaerr.IllegalAddress)))

	// The preallocated NotReady errors look like any other.
	assert.ErrorIs(t, rt.notReadyStream, cudaerr.NotReady)
	assert.Equal(t, "cudaStreamQuery: cudaErrorNotReady (600): device not ready", rt.notReadyStream.Error())
	assert.Equal(t, "cudaEventQuery: cudaErrorNotReady (600): device not ready", rt.notReadyEvent.Error())
}

// Without a GPU every device call fails cleanly; which code depends on whether a driver is
// installed (cudaErrorInsufficientDriver without one, cudaErrorNoDevice with one but no GPU).
func TestNoGPUErrors(t *testing.T) {
	if hasGPU() {
		t.Skip("a GPU is usable here")
	}
	rt := mustLoad(t)
	noDriver := func(err error) bool {
		return errors.Is(err, cudaerr.InsufficientDriver) || errors.Is(err, cudaerr.NoDevice)
	}

	n, err := rt.GetDeviceCount()
	require.Error(t, err)
	assert.Zero(t, n)
	assert.True(t, noDriver(err), "got %v", err)
	assert.Contains(t, err.Error(), "cudaGetDeviceCount: ")

	_, err = rt.Malloc(1024)
	assert.True(t, noDriver(err), "got %v", err)
	var ce *cudaerr.Error
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "cudaMalloc", ce.Op)
	assert.Equal(t, rt.ErrorString(ce.Code), ce.Message)

	_, err = rt.StreamCreateWithPriority(1, 0)
	assert.True(t, noDriver(err), "got %v", err)
	_, err = rt.EventCreateWithFlags(0)
	assert.True(t, noDriver(err), "got %v", err)

	// The version still comes out, from the file name if the runtime cannot tell.
	v, err := rt.RuntimeVersion()
	require.NoError(t, err)
	assert.GreaterOrEqual(t, v, 11000)

	dv, err := rt.DriverVersion()
	if err != nil {
		assert.Zero(t, dv)
	} else {
		assert.GreaterOrEqual(t, dv, 0)
	}
	t.Logf("runtime %s (%s), driver %d (%v)", FormatVersion(v), rt.Path(), dv, err)
}
