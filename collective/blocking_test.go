package collective

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
	isim "github.com/gpuactor/gpuactor/internal/sim"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/streams"
)

// A stand-in for NCCL's blocking communicators over the fake hub: while park is set, a
// launch or a finalize parks the actor's thread inside the call, as NCCL's does while it
// waits for a peer, until the comm is aborted from another goroutine
// (CollCommAbortAnyThread), and then fails as NCCL's aborted call does. Any call on a comm
// after its any-thread abort is counted: NCCL freed it.

type parker struct {
	mu        sync.Mutex
	park      bool
	parkedAt  chan backend.Comm // a call parked on this comm
	release   map[backend.Comm]chan struct{}
	freed     map[backend.Comm]bool // aborted from another goroutine
	blocking  []bool                // CommConfig.Blocking of every join
	anyAborts int
	useAfter  int // calls on a comm after its any-thread abort
}

type parkBackend struct {
	fakeBackend
	p *parker
}

func (b parkBackend) Open(ordinal int) (backend.Device, error) {
	d, err := b.fakeBackend.Open(ordinal)
	if err != nil {
		return nil, err
	}
	return &parkDevice{fakeDevice: d.(*fakeDevice), p: b.p}, nil
}

type parkDevice struct {
	*fakeDevice
	p *parker
}

var _ backend.CollAnyThreadAborter = (*parkDevice)(nil)

// used counts a call on c after its any-thread abort; true when it was one.
func (d *parkDevice) used(c backend.Comm) bool {
	d.p.mu.Lock()
	defer d.p.mu.Unlock()
	if d.p.freed[c] {
		d.p.useAfter++
		return true
	}
	return false
}

var errFreed = &backend.CollError{Code: backend.CollInvalidUsage, Call: "fake", Detail: "comm used after abort"}

func (d *parkDevice) CollCommInitRank(nranks int, id backend.CommID, rank int, cfg backend.CommConfig) (backend.Comm, error) {
	d.p.mu.Lock()
	d.p.blocking = append(d.p.blocking, cfg.Blocking)
	d.p.mu.Unlock()
	return d.fakeDevice.CollCommInitRank(nranks, id, rank, cfg)
}

// wait parks the calling (actor) thread while park is set, until c is aborted.
func (d *parkDevice) wait(c backend.Comm) error {
	d.p.mu.Lock()
	if !d.p.park {
		d.p.mu.Unlock()
		return nil
	}
	ch := d.p.release[c]
	if ch == nil {
		ch = make(chan struct{})
		d.p.release[c] = ch
	}
	d.p.mu.Unlock()
	d.p.parkedAt <- c
	<-ch
	return &backend.CollError{Code: backend.CollRemoteError, Call: "fake", Detail: "aborted while waiting for a peer"}
}

func (d *parkDevice) CollLaunch(c backend.Comm, s backend.Stream, ops []backend.CollOp) error {
	if d.used(c) {
		return errFreed
	}
	if err := d.wait(c); err != nil {
		return err
	}
	return d.fakeDevice.CollLaunch(c, s, ops)
}

func (d *parkDevice) CollCommFinalize(c backend.Comm) error {
	if d.used(c) {
		return errFreed
	}
	if err := d.wait(c); err != nil {
		return err
	}
	return d.fakeDevice.CollCommFinalize(c)
}

func (d *parkDevice) CollCommAsyncError(c backend.Comm) error {
	if d.used(c) {
		return errFreed
	}
	return d.fakeDevice.CollCommAsyncError(c)
}

func (d *parkDevice) CollCommDestroy(c backend.Comm) error {
	if d.used(c) {
		return errFreed
	}
	return d.fakeDevice.CollCommDestroy(c)
}

func (d *parkDevice) CollCommAbort(c backend.Comm) error {
	if d.used(c) {
		return errFreed
	}
	return d.fakeDevice.CollCommAbort(c)
}

func (d *parkDevice) CollCommAbortAnyThread(c backend.Comm) error {
	d.p.mu.Lock()
	defer d.p.mu.Unlock()
	if d.p.freed[c] {
		d.p.useAfter++
		return errFreed
	}
	d.p.freed[c] = true
	d.p.anyAborts++
	if ch := d.p.release[c]; ch != nil {
		close(ch)
	} else {
		d.p.release[c] = closedChan()
	}
	d.fakeDevice.hub.mu.Lock()
	d.fakeDevice.hub.comms[c].aborted = true
	d.fakeDevice.hub.mu.Unlock()
	return nil
}

func closedChan() chan struct{} {
	ch := make(chan struct{})
	close(ch)
	return ch
}

func (p *parker) setPark(on bool) {
	p.mu.Lock()
	p.park = on
	p.mu.Unlock()
}

func (p *parker) counts() (anyAborts, useAfter int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.anyAborts, p.useAfter
}

// parkDevices opens n simulated devices whose collectives are blocking stand-ins.
func parkDevices(t *testing.T, ctx context.Context, n int) ([]*device.Device, *parker) {
	t.Helper()
	p := &parker{parkedAt: make(chan backend.Comm, 16), release: map[backend.Comm]chan struct{}{}, freed: map[backend.Comm]bool{}}
	be := parkBackend{fakeBackend: fakeBackend{Backend: isim.New(isim.WithDevices(n)), hub: newFakeHub()}, p: p}
	devs := make([]*device.Device, n)
	for i := range devs {
		cd, err := core.Open(ctx, be, core.Config{}, i)
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, cd.Close()) })
		devs[i] = (*device.Device)(cd)
	}
	return devs, p
}

func TestCommunicatorsAreBlockingUnlessAskedNot(t *testing.T) {
	ctx := testdev.Ctx(t)
	devs, p := parkDevices(t, ctx, 2)
	comms, err := NewLocal(ctx, devs)
	require.NoError(t, err)
	closeAll(t, comms)
	comms, err = NewLocal(ctx, devs, WithNonBlocking(), WithCTAs(1, 2))
	require.NoError(t, err)
	closeAll(t, comms)
	p.mu.Lock()
	defer p.mu.Unlock()
	assert.Equal(t, []bool{true, true, false, false}, p.blocking)
}

func TestAbortFreesAnOperationParkedInNCCL(t *testing.T) {
	ctx := testdev.Ctx(t)
	devs, p := parkDevices(t, ctx, 2)
	comms, err := NewLocal(ctx, devs)
	require.NoError(t, err)
	s := streams.Default(devs[0])
	buf, err := alloc.Malloc[float32](ctx, s, 8)
	require.NoError(t, err)

	p.setPark(true) // the peer never launches its part
	f := AllReduce(ctx, s, comms[0], buf, buf, Sum)
	require.Equal(t, comms[0].h, <-p.parkedAt, "the actor is parked inside NCCL")
	require.NoError(t, comms[0].Abort(ctx), "Abort does not wait for the parked actor")
	err = f.Wait(ctx)
	require.ErrorIs(t, err, ErrAborted)
	assert.EqualValues(t, 1, comms[0].aborts.Load(), "aborted from Abort's goroutine")

	p.setPark(false)
	require.NoError(t, comms[0].Abort(ctx), "a second Abort does nothing")
	assert.ErrorIs(t, AllReduce(ctx, s, comms[0], buf, buf, Sum).Wait(ctx), ErrAborted)
	assert.NoError(t, comms[0].Close(ctx), "Close after Abort does nothing")
	anyAborts, useAfter := p.counts()
	assert.Equal(t, 1, anyAborts)
	assert.Zero(t, useAfter, "nothing touched the comm NCCL freed")
	usable(t, ctx, devs[0])
	require.NoError(t, comms[1].Abort(ctx))
}

func TestCtxEndFreesAnOperationParkedInNCCL(t *testing.T) {
	ctx := testdev.Ctx(t)
	devs, p := parkDevices(t, ctx, 2)
	comms, err := NewLocal(ctx, devs)
	require.NoError(t, err)
	defer closeAll(t, comms)
	s := streams.Default(devs[1])
	buf, err := alloc.Malloc[int32](ctx, s, 8)
	require.NoError(t, err)

	p.setPark(true)
	opCtx, cancel := context.WithCancel(ctx)
	f := AllReduce(opCtx, s, comms[1], buf, buf, Sum)
	<-p.parkedAt
	cancel()
	err = f.Wait(ctx)
	p.setPark(false)
	require.ErrorIs(t, err, ErrAborted)
	assert.ErrorIs(t, err, context.Canceled)
	assert.ErrorIs(t, comms[1].Err(ctx), ErrAborted)
	anyAborts, useAfter := p.counts()
	assert.Equal(t, 1, anyAborts)
	assert.Zero(t, useAfter)
	usable(t, ctx, devs[1])
}

func TestFinalizeParkedInNCCLAbortsAtTheDeadline(t *testing.T) {
	ctx := testdev.Ctx(t)
	devs, p := parkDevices(t, ctx, 2)
	comms, err := NewLocal(ctx, devs)
	require.NoError(t, err)

	p.setPark(true)
	fctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	err = comms[0].Finalize(fctx)
	require.ErrorIs(t, err, ErrAborted)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	p.setPark(false)
	require.NoError(t, comms[0].Close(ctx), "an aborted comm's Close does nothing")
	anyAborts, useAfter := p.counts()
	assert.Equal(t, 1, anyAborts)
	assert.Zero(t, useAfter)
	require.NoError(t, comms[1].Abort(ctx))
	usable(t, ctx, devs[0])
}

// An Abort while the actor is not inside NCCL aborts on the actor, and an operation queued
// behind it never enters NCCL.
func TestAbortOutsideACallAbortsOnTheActor(t *testing.T) {
	ctx := testdev.Ctx(t)
	devs, p := parkDevices(t, ctx, 2)
	comms, err := NewLocal(ctx, devs)
	require.NoError(t, err)
	require.NoError(t, comms[0].Abort(ctx))
	s := streams.Default(devs[0])
	buf, err := alloc.Malloc[float32](ctx, s, 8)
	require.NoError(t, err)
	assert.ErrorIs(t, AllReduce(ctx, s, comms[0], buf, buf, Sum).Wait(ctx), ErrAborted)
	anyAborts, useAfter := p.counts()
	assert.Zero(t, anyAborts)
	assert.Zero(t, useAfter)
	assert.Zero(t, comms[0].aborts.Load())
	require.NoError(t, comms[1].Abort(ctx))
}

// Abort racing operations from several goroutines: every operation either runs or fails
// with ErrAborted, the comm is aborted once, and nothing touches it after.
func TestAbortRacesBlockingOperations(t *testing.T) {
	ctx := testdev.Ctx(t)
	devs, p := parkDevices(t, ctx, 2)
	for round := range 20 {
		comms, err := NewLocal(ctx, devs)
		require.NoError(t, err)
		s := streams.Default(devs[0])
		buf, err := alloc.Malloc[float32](ctx, s, 8)
		require.NoError(t, err)
		p.setPark(round%2 == 1) // odd rounds: operations park until the abort
		var wg sync.WaitGroup
		errs := make([]error, 8)
		for g := range errs {
			wg.Go(func() { errs[g] = AllReduce(ctx, s, comms[0], buf, buf, Sum).Wait(ctx) })
		}
		if round%2 == 1 {
			<-p.parkedAt
		}
		require.NoError(t, comms[0].Abort(ctx))
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				assert.ErrorIs(t, err, ErrAborted)
			}
		}
		p.setPark(false)
		for len(p.parkedAt) > 0 {
			<-p.parkedAt
		}
		require.NoError(t, comms[1].Abort(ctx))
		require.NoError(t, buf.Close(ctx))
	}
	_, useAfter := p.counts()
	assert.Zero(t, useAfter)
	usable(t, ctx, devs[0])
}

type countAborter struct{ n int }

func (a *countAborter) CollCommAbortAnyThread(backend.Comm) error { a.n++; return nil }

// A ctx watcher that fires after its call returned must not abort the actor's next call.
func TestALateWatcherLeavesTheNextCallAlone(t *testing.T) {
	a := &countAborter{}
	c := &Comm{h: 0x100, blocking: true, anyAbort: a}
	first, ok := c.enter()
	require.True(t, ok)
	require.False(t, c.leave())
	second, ok := c.enter()
	require.True(t, ok)
	done, err := c.abortElsewhere(false, first)
	require.NoError(t, err)
	assert.False(t, done, "the first call's watcher is too late")
	assert.Zero(t, a.n)
	assert.False(t, c.abortReq.Load(), "a watcher leaves no request behind")
	done, err = c.abortElsewhere(false, second)
	require.NoError(t, err)
	assert.True(t, done)
	assert.Equal(t, 1, a.n)
	assert.True(t, c.leave(), "the actor sees the comm aborted when it comes back")
	_, ok = c.enter()
	assert.False(t, ok, "nothing enters NCCL on an aborted comm")
}

// An abort from elsewhere that finds the actor's call just begun waits until the call is
// entryGrace old, since the actor may not have reached NCCL yet; a call that returns first
// is left to the actor, which the request keeps from entering another.
func TestAbortElsewhereSparesACallJustBegun(t *testing.T) {
	a := &countAborter{}
	c := &Comm{h: 0x100, blocking: true, anyAbort: a}
	_, ok := c.enter()
	require.True(t, ok)
	time.AfterFunc(entryGrace/4, func() { c.leave() })
	done, err := c.abortElsewhere(true, 0)
	require.NoError(t, err)
	assert.False(t, done, "the call returned within the grace")
	assert.Zero(t, a.n, "nothing aborted the comm under the actor")
	_, ok = c.enter()
	assert.False(t, ok, "the request keeps the actor from the next call")

	c = &Comm{h: 0x101, blocking: true, anyAbort: a}
	_, ok = c.enter()
	require.True(t, ok)
	entered := time.Now()
	done, err = c.abortElsewhere(true, 0)
	require.NoError(t, err)
	assert.True(t, done, "a call still under way after the grace is aborted from here")
	assert.GreaterOrEqual(t, time.Since(entered), entryGrace)
	assert.Equal(t, 1, a.n)
	assert.True(t, c.leave())
}
