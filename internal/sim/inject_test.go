package sim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// hostOps runs n host functions on a new stream of d and waits for them; the error is the
// stream's once they ran.
func hostOps(t *testing.T, d backend.Device, n int) error {
	t.Helper()
	s, err := d.StreamCreate(backend.StreamNonBlocking, 0)
	require.NoError(t, err)
	for range n {
		if err := d.LaunchHostFunc(s, func() {}); err != nil {
			return err
		}
	}
	return d.StreamSynchronize(s)
}

func TestInjectedStickyFaultAtTheNthOperation(t *testing.T) {
	b := New(WithFaults(1, FaultPlan{StickyAt: 5}), WithConfinedFaults())
	d0, err := b.Open(0)
	require.NoError(t, err)
	d1, err := b.Open(1)
	require.NoError(t, err)
	require.NoError(t, hostOps(t, d1, 4), "four operations run")
	err = hostOps(t, d1, 1)
	requireCode(t, err, cudaerr.LaunchFailure, "the fifth faults")
	assert.ErrorContains(t, err, "injected")
	_, err = d1.Malloc(16)
	requireCode(t, err, cudaerr.LaunchFailure, "sticky")
	require.NoError(t, hostOps(t, d0, 10), "the other device goes on: faults are confined")
}

// Unconfined, as in a process on GPUs, a sticky fault fails every device of the machine with
// its code; a lost device stays the device's alone.
func TestStickyFaultFailsTheWholeMachine(t *testing.T) {
	b, d0, d1 := open(t, WithDevices(3))
	d2, err := b.Open(2)
	require.NoError(t, err)
	require.NoError(t, b.Lose(2))
	require.NoError(t, hostOps(t, d0, 2), "a lost device leaves the others")
	require.NoError(t, b.Fail(1, cudaerr.MisalignedAddress))
	for _, d := range []backend.Device{d0, d1} {
		_, err := d.Malloc(16)
		requireCode(t, err, cudaerr.MisalignedAddress)
	}
	_, err = d0.Malloc(16)
	assert.ErrorContains(t, err, "device 1 faulted")
	_, err = d2.Malloc(16)
	requireCode(t, err, cudaerr.DevicesUnavailable, "a device lost before keeps its own failure")
}

func TestInjectedLoss(t *testing.T) {
	b := New(WithFaults(0, FaultPlan{LostAt: 2}))
	d, err := b.Open(0)
	require.NoError(t, err)
	requireCode(t, hostOps(t, d, 3), cudaerr.DevicesUnavailable)
	_, err = d.Malloc(16)
	requireCode(t, err, cudaerr.DevicesUnavailable)

	b = New()
	d, err = b.Open(1)
	require.NoError(t, err)
	require.NoError(t, b.Lose(1))
	_, err = d.Malloc(16)
	requireCode(t, err, cudaerr.DevicesUnavailable)
	require.Error(t, b.Lose(7))
}

func TestInjectedFailNow(t *testing.T) {
	b := New()
	d, err := b.Open(0)
	require.NoError(t, err)
	require.NoError(t, b.Fail(0, cudaerr.IllegalAddress))
	_, err = d.Malloc(16)
	requireCode(t, err, cudaerr.IllegalAddress)
	b = New()
	require.NoError(t, b.Fail(1, cudaerr.InvalidValue))
	d1, err := b.Open(1)
	require.NoError(t, err)
	_, err = d1.Malloc(16)
	requireCode(t, err, cudaerr.LaunchFailure, "a code that is not sticky becomes a launch failure")
}

func TestInjectedAllocationFailures(t *testing.T) {
	b := New(WithFaults(0, FaultPlan{AllocFailRate: 0.5, Seed: 7}))
	d, err := b.Open(0)
	require.NoError(t, err)
	s, err := d.StreamCreate(backend.StreamNonBlocking, 0)
	require.NoError(t, err)
	var failed int
	for range 200 {
		p, err := d.Malloc(64)
		if err != nil {
			requireCode(t, err, cudaerr.MemoryAllocation)
			failed++
			continue
		}
		require.NoError(t, d.Free(p))
	}
	assert.InDelta(t, 100, failed, 40)
	for range 20 {
		if _, err := d.MallocAsync(64, s); err != nil {
			requireCode(t, err, cudaerr.MemoryAllocation)
		}
		if _, err := d.HostAlloc(64, 0); err != nil {
			requireCode(t, err, cudaerr.MemoryAllocation)
		}
	}
	require.NoError(t, hostOps(t, d, 3), "an allocation failure is not sticky")
}

func TestInjectedSlowOperations(t *testing.T) {
	b := New(WithFaults(0, FaultPlan{SlowRate: 1, SlowBy: 5 * time.Millisecond}))
	d, err := b.Open(0)
	require.NoError(t, err)
	start := time.Now()
	require.NoError(t, hostOps(t, d, 4))
	assert.GreaterOrEqual(t, time.Since(start), 20*time.Millisecond)
}

// A machine's fault plan goes to the first worker of its ordinal only: a worker started in its
// place is made without it, and the other ordinals' plans are not the worker's.
func TestWorkerSpecHandsThePlanOnce(t *testing.T) {
	plan := FaultPlan{StickyAt: 3}
	m := NewMachine(Spec{Devices: 2, Faults: map[int]FaultPlan{0: plan, 1: {LostAt: 5}}})
	first := m.WorkerSpec(0)
	require.Equal(t, map[int]FaultPlan{0: plan}, first.Faults)
	assert.Empty(t, m.WorkerSpec(0).Faults, "a restarted worker is healthy")
	assert.Equal(t, map[int]FaultPlan{1: {LostAt: 5}}, m.WorkerSpec(1).Faults)
	assert.Len(t, m.Spec().Faults, 2, "the machine's own spec keeps every plan")
}
