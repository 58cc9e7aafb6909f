package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/examples/internal/sample"
	"github.com/gpuactor/gpuactor/sim"
	"github.com/gpuactor/gpuactor/streams"
)

// simBench opens n simulated GPUs with the sample's kernels loaded and a rig of numElems ints.
func simBench(t *testing.T, n, numElems int) (*bench, *rig) {
	t.Helper()
	ctx := context.Background()
	devs, err := device.OpenAll(ctx, device.WithBackend(device.BackendSim), device.WithSimulator(sim.New(sim.WithDevices(n))))
	require.NoError(t, err)
	b := &bench{devs: devs, views: &sample.HostViews[int32]{}}
	// A device a test faulted on purpose fails its frees and its Close: only healthy ones
	// must clean up without error.
	healthy := func() bool {
		for _, d := range devs {
			if d.Err() != nil {
				return false
			}
		}
		return true
	}
	t.Cleanup(func() {
		for _, d := range devs {
			if err := d.Close(); healthy() {
				assert.NoError(t, err)
			}
		}
	})
	for _, d := range devs {
		k, err := loadKernels(ctx, d, b.views)
		require.NoError(t, err)
		b.kerns = append(b.kerns, k)
	}
	r, err := b.newRig(ctx, numElems, 1)
	require.NoError(t, err)
	t.Cleanup(func() {
		if err := r.close(ctx); healthy() {
			assert.NoError(t, err)
		}
	})
	return b, r
}

// TestDelayHoldsUntilReleased: the delay kernel holds its stream while the flag is 0, and lets
// it go once the host sets the flag.
func TestDelayHoldsUntilReleased(t *testing.T) {
	ctx := context.Background()
	b, r := simBench(t, 1, 4)
	s := r.streams[0][0]
	r.hold()
	// A timeout of 10¹² clocks (minutes): only the flag ends it within the test.
	held := s.Launch(ctx, b.kerns[0].delay, cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(1)}, r.flagPtrs[0], uint64(1e12))
	behind := s.Record(ctx, r.stop[0])
	time.Sleep(20 * time.Millisecond)
	done, err := r.stop[0].Query(ctx)
	require.NoError(t, err)
	assert.False(t, done, "the work behind the delay kernel ran before the flag was set")
	r.release()
	require.NoError(t, actor.WaitAll(ctx, held, behind))
}

// TestDelayTimesOut: without the flag, the delay kernel gives up after its timeout in the
// device's clocks (the simulator's 1.98 GHz) and the stream goes on.
func TestDelayTimesOut(t *testing.T) {
	ctx := context.Background()
	b, r := simBench(t, 1, 4)
	s := r.streams[0][0]
	r.hold()
	const clocks = 19_800_000 // 10 ms
	start := time.Now()
	err := s.Launch(ctx, b.kerns[0].delay, cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(1)}, r.flagPtrs[0], uint64(clocks)).Wait(ctx)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, time.Since(start), 10*time.Millisecond)
}

// TestDelayUnknownFlag: a delay launched with an address that is neither device memory nor a
// mapped flag faults the device with an error naming it, as a bad address faults a kernel.
func TestDelayUnknownFlag(t *testing.T) {
	ctx := context.Background()
	b, r := simBench(t, 1, 4)
	bad := r.ptrs[0] + 1<<40
	err := r.streams[0][0].Launch(ctx, b.kerns[0].delay, cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(1)}, bad, uint64(1)).Wait(ctx)
	require.ErrorContains(t, err, "neither device memory nor a mapped host array")
	require.ErrorContains(t, err, fmt.Sprintf("%#x", uintptr(bad)))
	require.Error(t, b.devs[0].Err())
}

// TestPerformCopyMovesData: both ways of copying between two GPUs, the SM copy kernel (with
// peer access) and the copy engines (a peer copy), move the source buffer into the
// destination.
func TestPerformCopyMovesData(t *testing.T) {
	ctx := context.Background()
	const n = 1000 // not a multiple of 4: the kernel copies the whole int4s, 249 of them
	for _, sm := range []bool{true, false} {
		b, r := simBench(t, 2, n)
		b.smCopy = sm
		src := make([]int32, n)
		for i := range src {
			src[i] = int32(i*7 + 1)
		}
		s := r.streams[0][0]
		require.NoError(t, streams.CopyToDevice(ctx, s, r.bufs[0], src).Wait(ctx))
		require.NoError(t, b.peerAccess(ctx, 0, 1, true))
		require.NoError(t, actor.WaitAll(ctx, b.performCopy(ctx, s, 0, r.buffer(1), r.buffer(0), n, 2, true)...))
		require.NoError(t, b.peerAccess(ctx, 0, 1, false))
		got := make([]int32, n)
		require.NoError(t, streams.CopyFromDevice(ctx, r.streams[1][0], got, r.bufs[1]).Wait(ctx))
		copied := n
		if sm {
			copied = n / 4 * 4
			assert.Equal(t, make([]int32, n-copied), got[copied:], "sm: past the last whole int4")
		}
		assert.Equal(t, src[:copied], got[:copied], "sm %v", sm)
	}
}
