package device_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/sim"
)

// countOp is an Enqueuer that counts its runs and completes its future itself.
type countOp struct {
	device.Op
	runs int
}

func (o *countOp) Enqueue(_ backend.Device, _ *device.Tracker, f *actor.Future[struct{}]) error {
	o.runs++
	f.Complete(struct{}{}, nil)
	return nil
}

func TestSubmitRefusesAReusedOp(t *testing.T) {
	ctx := context.Background()
	dev, err := device.OpenOn(ctx, sim.New(), 0)
	require.NoError(t, err)
	defer dev.Close()
	o := &countOp{}
	first := device.Submit(ctx, dev, &o.Op, o)
	_, err = first.Await(ctx)
	require.NoError(t, err)
	second := device.Submit(ctx, dev, &o.Op, o)
	_, err = second.Await(ctx)
	assert.ErrorIs(t, err, actor.ErrFutureReused)
	assert.NotSame(t, first, second)
	_, err = device.ExecFuture(ctx, dev, func(_ backend.Device, _ *device.Tracker, f *actor.Future[struct{}]) error {
		f.Complete(struct{}{}, nil)
		return nil
	}).Await(ctx)
	require.NoError(t, err, "the device goes on")
	assert.Equal(t, 1, o.runs)
}

// fakeAlloc makes up an address on the actor thread.
type fakeAlloc struct{ runs int }

func (a *fakeAlloc) Allocate(backend.Device, *device.Tracker) (device.DevicePtr, error) {
	a.runs++
	return 1 << 20, nil
}

func TestAllocAsyncRefusesASentMessage(t *testing.T) {
	ctx := context.Background()
	dev, err := device.OpenOn(ctx, sim.New(), 0)
	require.NoError(t, err)
	defer dev.Close()
	before := dev.Usage()
	msg := actor.NewFuture[struct{}]()
	a := &fakeAlloc{}
	var b1, b2 device.Buffer
	release := func(backend.Device, device.DevicePtr, backend.Stream) error { return nil }
	require.NoError(t, device.AllocAsync(ctx, dev, &b1, 64, device.KindAsync, msg, release, a))
	err = device.AllocAsync(ctx, dev, &b2, 64, device.KindAsync, msg, release, a)
	require.ErrorIs(t, err, actor.ErrFutureReused)
	msg.Complete(struct{}{}, nil) // as the tracker would once the GPU passed the allocation
	require.NoError(t, b1.Free(ctx))
	assert.ErrorIs(t, b2.Free(ctx), device.ErrAllocFailed, "the refused buffer has no memory")
	assert.Equal(t, before, dev.Usage(), "nothing stays charged")
	assert.Equal(t, 1, a.runs)
}

func TestOpenOnNeedsABackend(t *testing.T) {
	_, err := device.OpenOn(context.Background(), nil, 0)
	assert.ErrorIs(t, err, device.ErrInvalidArgument)
}
