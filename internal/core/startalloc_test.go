package core

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/sim"
)

// startingBackend is the simulator with devices that start their allocations
// (backend.AllocStarter), as an isolated device's do: each allocation runs when started, in
// order, and its answer waits for Wait. The device counts how many are in flight at once.
type startingBackend struct {
	backend.Backend
	dev *startingDevice
}

func (b *startingBackend) Open(ordinal int) (backend.Device, error) {
	d, err := b.Backend.Open(ordinal)
	if err != nil {
		return nil, err
	}
	b.dev.Device = d
	return b.dev, nil
}

type startingDevice struct {
	backend.Device
	mu         sync.Mutex
	inFlight   int
	most       int    // the most in flight at once
	starts     int    // allocations started
	startErr   error  // StartMallocAsync fails with it
	failSize   uint64 // an allocation of this size fails with out of memory
	allocCalls int    // MallocAsync called directly
}

func (d *startingDevice) StartMallocAsync(size uint64, pool backend.MemPool, fromPool bool, s backend.Stream) (backend.PendingAlloc, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.startErr != nil {
		return nil, d.startErr
	}
	r := &startedResult{d: d}
	if size == d.failSize {
		r.err = cudaerr.MemoryAllocation
	} else {
		if fromPool {
			r.p, r.err = d.Device.MallocFromPoolAsync(size, pool, s)
		} else {
			r.p, r.err = d.Device.MallocAsync(size, s)
		}
	}
	d.starts++
	d.inFlight++
	d.most = max(d.most, d.inFlight)
	return r, nil
}

func (d *startingDevice) MallocAsync(size uint64, s backend.Stream) (backend.DevicePtr, error) {
	d.mu.Lock()
	d.allocCalls++
	d.mu.Unlock()
	return d.Device.MallocAsync(size, s)
}

func (d *startingDevice) counts() (most, starts, direct int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.most, d.starts, d.allocCalls
}

type startedResult struct {
	d   *startingDevice
	p   backend.DevicePtr
	err error
}

func (r *startedResult) Wait() (backend.DevicePtr, error) {
	r.d.mu.Lock()
	r.d.inFlight--
	r.d.mu.Unlock()
	return r.p, r.err
}

func openStarting(t *testing.T) (*Device, *startingDevice) {
	t.Helper()
	sd := &startingDevice{}
	d, err := Open(context.Background(), &startingBackend{Backend: sim.New(), dev: sd}, Config{}, 0)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, d.Close()) })
	return d, sd
}

// holdActor keeps d's actor in a message until the returned function is called, so that what
// is sent meanwhile queues up and runs as one list.
func holdActor(t *testing.T, d *Device) (release func()) {
	t.Helper()
	held, resume := make(chan struct{}), make(chan struct{})
	go func() {
		_ = Do(context.Background(), d, func(backend.Device, *Tracker) error {
			close(held)
			<-resume
			return nil
		})
	}()
	<-held
	return sync.OnceFunc(func() { close(resume) })
}

// Allocations queued together are all started before the first address is collected, and
// each buffer then has its own memory, usable by the messages after it.
func TestStartedAllocationsShareOneRoundTrip(t *testing.T) {
	ctx := context.Background()
	d, sd := openStarting(t)
	release := holdActor(t, d)
	defer release()
	allocs := make([]AsyncAlloc, 3)
	for i := range allocs {
		require.NoError(t, AllocAsync(ctx, d.Stream(), &allocs[i], 4096, nil))
	}
	resolved := Run(ctx, d, func(backend.Device, *Tracker) ([]uint64, error) {
		var got []uint64
		for i := range allocs {
			p, _, err := d.Resolve("buffer", &allocs[i].Buffer)
			if err != nil {
				return nil, err
			}
			got = append(got, uint64(p))
		}
		return got, nil
	})
	release()
	got, err := resolved.Await(ctx)
	require.NoError(t, err)
	require.Len(t, got, 3, "every buffer resolves in the message after the allocations")
	assert.NotEqual(t, got[0], got[1])
	assert.NotEqual(t, got[1], got[2])
	for i := range allocs {
		require.NoError(t, allocs[i].Future().Wait(ctx))
		p, err := allocs[i].DevicePtr(ctx)
		require.NoError(t, err)
		assert.Equal(t, got[i], uint64(p))
	}
	most, starts, direct := sd.counts()
	assert.Equal(t, 3, most, "the three allocations were in flight at once")
	assert.Equal(t, 3, starts)
	assert.Zero(t, direct, "no allocation waited alone")
	for i := range allocs {
		require.NoError(t, allocs[i].Close(ctx))
	}
}

// DevicePtr from another goroutine gets the address without any later message: the actor
// collects started allocations before it idles.
func TestStartedAllocationSettlesWhenIdle(t *testing.T) {
	ctx := context.Background()
	d, _ := openStarting(t)
	var a AsyncAlloc
	require.NoError(t, AllocAsync(ctx, d.Stream(), &a, 256, nil))
	p, err := a.DevicePtr(ctx)
	require.NoError(t, err)
	assert.NotZero(t, p)
	require.NoError(t, a.Future().Wait(ctx))
	require.NoError(t, a.Close(ctx))
}

// An allocation that fails in flight fails its future and every use, gives its charge back,
// and leaves the allocations started with it and the device usable.
func TestStartedAllocationFailure(t *testing.T) {
	ctx := context.Background()
	d, sd := openStarting(t)
	before, _ := d.Usage()
	sd.failSize = 12345

	release := holdActor(t, d)
	defer release()
	var good1, bad, good2 AsyncAlloc
	require.NoError(t, AllocAsync(ctx, d.Stream(), &good1, 64, nil))
	require.NoError(t, AllocAsync(ctx, d.Stream(), &bad, sd.failSize, nil))
	require.NoError(t, AllocAsync(ctx, d.Stream(), &good2, 64, nil))
	uses := Run(ctx, d, func(backend.Device, *Tracker) ([2]error, error) {
		var errs [2]error
		_, _, errs[0] = d.Resolve("good2", &good2.Buffer)
		_, _, errs[1] = d.Resolve("bad", &bad.Buffer)
		return errs, nil
	})
	release()
	errs, err := uses.Await(ctx)
	require.NoError(t, err)
	require.NoError(t, errs[0], "the allocation after the failed one has its memory")
	require.ErrorIs(t, errs[1], ErrAllocFailed)
	assert.ErrorIs(t, errs[1], cudaerr.MemoryAllocation)

	err = bad.Future().Wait(ctx)
	require.ErrorIs(t, err, cudaerr.MemoryAllocation)
	assert.ErrorContains(t, err, "MallocAsync(12345 bytes)")
	_, err = bad.DevicePtr(ctx)
	assert.ErrorIs(t, err, ErrAllocFailed)
	assert.ErrorIs(t, bad.Close(ctx), ErrAllocFailed)
	for _, a := range []*AsyncAlloc{&good1, &good2} {
		require.NoError(t, a.Future().Wait(ctx))
		require.NoError(t, a.Close(ctx))
	}
	after, _ := d.Usage()
	assert.Equal(t, before, after, "nothing stays charged")
	require.NoError(t, d.Err(), "out of memory does not fail the device")
}

// A start that fails (the worker gone, say) fails the allocation as one that ran would.
func TestStartFailureFailsTheAllocation(t *testing.T) {
	ctx := context.Background()
	d, sd := openStarting(t)
	before, _ := d.Usage()
	sd.mu.Lock()
	sd.startErr = errors.New("no worker")
	sd.mu.Unlock()
	var a AsyncAlloc
	require.NoError(t, AllocAsync(ctx, d.Stream(), &a, 64, nil))
	err := a.Future().Wait(ctx)
	require.ErrorContains(t, err, "no worker")
	_, err = a.DevicePtr(ctx)
	assert.ErrorIs(t, err, ErrAllocFailed)
	after, _ := d.Usage()
	assert.Equal(t, before, after)

	sd.mu.Lock()
	sd.startErr = nil
	sd.mu.Unlock()
	var b AsyncAlloc
	require.NoError(t, AllocAsync(ctx, d.Stream(), &b, 64, nil))
	require.NoError(t, b.Future().Wait(ctx))
	require.NoError(t, b.Close(ctx))
}

// Closing the device with allocations started and never used collects and frees them.
func TestCloseCollectsStartedAllocations(t *testing.T) {
	ctx := context.Background()
	sd := &startingDevice{}
	d, err := Open(ctx, &startingBackend{Backend: sim.New(), dev: sd}, Config{}, 0)
	require.NoError(t, err)
	release := holdActor(t, d)
	allocs := make([]AsyncAlloc, 4)
	for i := range allocs {
		require.NoError(t, AllocAsync(ctx, d.Stream(), &allocs[i], 1024, nil))
	}
	closed := make(chan error, 1)
	go func() { closed <- d.Close() }()
	release()
	require.NoError(t, <-closed)
	for i := range allocs {
		assert.NoError(t, allocs[i].Future().Err(), "allocation %d", i)
		assert.True(t, allocs[i].Closed(), "allocation %d was freed with the device", i)
	}
	_, starts, _ := sd.counts()
	assert.Equal(t, 4, starts)
	sd.mu.Lock()
	defer sd.mu.Unlock()
	assert.Zero(t, sd.inFlight, "every started allocation was collected")
}

// A launch whose memory arguments are the first use of allocations still to collect gets
// their addresses, every one of them.
func TestLaunchCollectsStartedAllocations(t *testing.T) {
	ctx := context.Background()
	d, _ := openStarting(t)
	var got [3]uint64
	m, err := LoadModule(ctx, d, "args", backend.ModuleSpec{SimKernels: map[string]cuda.SimKernel{
		"three": func(c *cuda.KernelCall) error {
			for i := range got {
				got[i] = uint64(c.Ptr(i))
			}
			return nil
		},
	}}, nil)
	require.NoError(t, err)
	k, err := m.Kernel(ctx, "three")
	require.NoError(t, err)

	release := holdActor(t, d)
	defer release()
	allocs := make([]AsyncAlloc, 3)
	args := make([]any, 3)
	for i := range allocs {
		require.NoError(t, AllocAsync(ctx, d.Stream(), &allocs[i], 4096, nil))
		args[i] = &allocs[i].Buffer
	}
	launched := Launch(ctx, d.Stream(), k, oneBlock, args)
	release()
	require.NoError(t, launched.Wait(ctx))
	for i := range allocs {
		p, err := allocs[i].DevicePtr(ctx)
		require.NoError(t, err)
		assert.Equal(t, uint64(p), got[i], "argument %d", i)
		require.NoError(t, allocs[i].Close(ctx))
	}
}
