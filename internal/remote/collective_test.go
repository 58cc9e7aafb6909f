//go:build linux

package remote_test

import (
	"errors"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/internal/backend"
)

// TestCollectiveAcrossWorkers forms one communicator of two isolated devices, each the
// simulator of its own worker process, all-reduces over it, and then kills the worker that
// made the id (and serves the rendezvous root): the surviving rank's communicator fails
// with a CollError instead of hanging.
func TestCollectiveAcrossWorkers(t *testing.T) {
	be0, d0 := open(t)
	_, d1 := open(t)
	devs := []backend.Device{d0, d1}
	id, err := d0.CollUniqueID()
	require.NoError(t, err)
	comms := make([]backend.Comm, 2)
	for r, dv := range devs {
		comms[r], err = dv.CollCommInitRank(2, id, r, backend.CommConfig{})
		require.NoError(t, err)
	}
	for r, dv := range devs {
		require.NoError(t, collSettle(dv, comms[r]), "rank %d", r)
		count, rank, _, err := dv.CollCommInfo(comms[r])
		require.NoError(t, err)
		assert.Equal(t, [2]int{2, r}, [2]int{count, rank})
	}

	const n = 300
	hosts := make([][]float64, 2)
	ptrs := make([]backend.DevicePtr, 2)
	streams := make([]backend.Stream, 2)
	for r, dv := range devs {
		hp, err := dv.HostAlloc(8*n, 0)
		require.NoError(t, err)
		hosts[r] = unsafe.Slice((*float64)(hp), n)
		for i := range hosts[r] {
			hosts[r][i] = float64(i*(r+1)) + 0.5
		}
		ptrs[r], err = dv.Malloc(8 * n)
		require.NoError(t, err)
		streams[r], err = dv.StreamCreate(backend.StreamNonBlocking, 0)
		require.NoError(t, err)
		require.NoError(t, dv.CopyHtoD(ptrs[r], hp, 8*n, streams[r]))
		require.NoError(t, dv.CollLaunch(comms[r], streams[r], []backend.CollOp{
			{Kind: backend.CollAllReduce, Send: ptrs[r], Recv: ptrs[r], Count: n, Type: backend.CollFloat64, Op: backend.CollSum},
		}))
	}
	for r, dv := range devs {
		require.NoError(t, dv.StreamSynchronize(streams[r]))
		clear(hosts[r])
		require.NoError(t, dv.CopyDtoH(unsafe.Pointer(&hosts[r][0]), ptrs[r], 8*n, streams[r]))
		require.NoError(t, dv.StreamSynchronize(streams[r]))
		for i, v := range hosts[r] {
			require.Equal(t, float64(3*i)+1, v, "rank %d element %d", r, i)
		}
	}
	require.NoError(t, d1.CollCommAsyncError(comms[1]))

	// Rank 1 waits in a second all-reduce that rank 0's process will never join.
	require.NoError(t, d1.CollLaunch(comms[1], streams[1], []backend.CollOp{
		{Kind: backend.CollAllReduce, Send: ptrs[1], Recv: ptrs[1], Count: n, Type: backend.CollFloat64, Op: backend.CollSum},
	}))
	require.NoError(t, be0.Close())
	deadline := time.Now().Add(20 * time.Second)
	var ce *backend.CollError
	for !errors.As(d1.CollCommAsyncError(comms[1]), &ce) {
		require.True(t, time.Now().Before(deadline), "rank 1's communicator did not fail")
		time.Sleep(time.Millisecond)
	}
	assert.Contains(t, []int32{backend.CollRemoteError, backend.CollSystemError}, ce.Code, ce.Error())
	require.NoError(t, d1.StreamSynchronize(streams[1]), "the failed all-reduce ends; the device is fine")
	require.NoError(t, d1.CollCommAbort(comms[1]))
	_, _, err = d1.MemInfo()
	require.NoError(t, err)
}
