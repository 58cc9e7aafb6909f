package collective

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
)

// Comm is one device's rank in a communicator (an ncclComm_t), driven from that device's
// actor thread. Its operations (AllReduce, Send, …) run on streams of its device. Close it
// (or Abort it) before closing its device. Its methods are safe for concurrent use; NCCL
// requires that every rank issue the communicator's operations in the same order.
type Comm struct {
	dev   *device.Device
	h     backend.Comm
	rank  int
	count int

	state    atomic.Int32 // live, finalizing, closed, aborted
	abortReq atomic.Bool  // Abort was called: a wait on the actor thread aborts at once
	closeMu  sync.Mutex   // one Finalize or Close at a time

	blocking bool                         // a blocking communicator (the default)
	anyAbort backend.CollAnyThreadAborter // aborts from any goroutine; nil where the backend has none
	callMu   sync.Mutex                   // orders the actor's blocking calls with an abort from elsewhere
	inCall   bool                         // under callMu: the actor is inside a blocking NCCL call on h
	callSeq  uint64                       // under callMu: the number of the latest such call
	callAt   time.Time                    // under callMu: when the actor entered it
	aborts   atomic.Int64                 // aborts made from another goroutine, for tests
}

// The states of a Comm. Only the actor thread moves a comm to closed or aborted.
const (
	stLive int32 = iota
	stFinalizing
	stClosed
	stAborted
)

// NewID makes the ID of a new communicator on dev (ncclGetUniqueId). Hand it to every rank
// that joins; on the CUDA backend it carries the address of a bootstrap socket this process
// opened, so the ranks must be able to reach this host.
func NewID(ctx context.Context, dev *device.Device) (ID, error) {
	if dev == nil {
		return ID{}, core.Invalid("collective: NewID on a nil device")
	}
	id, err := core.Run(ctx, (*core.Device)(dev), func(rt backend.Device, _ *core.Tracker) (backend.CommID, error) {
		return rt.CollUniqueID()
	}).Await(ctx)
	if err != nil {
		return ID{}, fmt.Errorf("collective: NewID on device %d: %w", dev.Ordinal(), err)
	}
	return ID(id), nil
}

// Version is the version code of the NCCL that dev's backend drives (22803 for 2.28.3).
func Version(ctx context.Context, dev *device.Device) (int, error) {
	if dev == nil {
		return 0, core.Invalid("collective: Version on a nil device")
	}
	return core.Run(ctx, (*core.Device)(dev), func(rt backend.Device, _ *core.Tracker) (int, error) {
		return rt.CollVersion()
	}).Await(ctx)
}

// Join makes dev rank rank of the nranks-rank communicator id names
// (ncclCommInitRankConfig) and returns once every rank has joined and the communicator is
// ready.
//
// The communicator is blocking unless WithNonBlocking is given (see WithNonBlocking for the
// difference). A blocking join parks dev's actor inside NCCL until every rank has joined or
// NCCL's bootstrap gives up; no abort can reach it, since NCCL hands out no communicator
// until then. When ctx ends first, Join returns ctx's error at once and the rank is aborted
// as soon as NCCL gives the actor back.
//
// A non-blocking join lets NCCL form the communicator in the background while Join polls it
// with short calls on dev's actor, which meanwhile serves other work. When ctx ends first
// the rank's communicator is aborted (ncclCommAbort), so that no thread waits on a peer
// that never comes, and the error matches both ErrAborted and ctx's error; dev stays usable.
func Join(ctx context.Context, dev *device.Device, id ID, nranks, rank int, opts ...Option) (*Comm, error) {
	if dev == nil {
		return nil, core.Invalid("collective: Join on a nil device")
	}
	if nranks < 1 {
		return nil, core.Invalid("collective: Join of a communicator of %d ranks", nranks)
	}
	if rank < 0 || rank >= nranks {
		return nil, core.OutOfRange("collective: Join as rank %d of a communicator of %d ranks (0 to %d)", rank, nranks, nranks-1)
	}
	cfg, err := configOf(opts)
	if err != nil {
		return nil, err
	}
	cd := (*core.Device)(dev)
	var anyAbort backend.CollAnyThreadAborter
	h, err := core.Make(ctx, cd, func(rt backend.Device, _ *core.Tracker) (backend.Comm, error) {
		anyAbort, _ = rt.(backend.CollAnyThreadAborter)
		h, err := rt.CollCommInitRank(nranks, backend.CommID(id), rank, cfg)
		if err != nil && !errors.Is(err, backend.ErrCollInProgress) {
			if h != 0 {
				_ = rt.CollCommAbort(h) // a comm NCCL made before it failed
			}
			return 0, err
		}
		return h, nil
	}, func(rt backend.Device, _ *core.Tracker, h backend.Comm) { _ = rt.CollCommAbort(h) })
	if err != nil {
		return nil, fmt.Errorf("collective: rank %d of %d joining on device %d: %w", rank, nranks, dev.Ordinal(), err)
	}
	c := &Comm{dev: dev, h: h, rank: rank, count: nranks, blocking: cfg.Blocking, anyAbort: anyAbort}
	if err := c.ready(ctx, h, "joining"); err != nil {
		return nil, err
	}
	if err := c.checkInfo(ctx); err != nil {
		_ = c.Abort(context.WithoutCancel(ctx))
		return nil, err
	}
	return c, nil
}

// checkInfo asks NCCL for the comm's size and this rank, which must be what was asked for.
func (c *Comm) checkInfo(ctx context.Context) error {
	type info struct{ count, rank int }
	got, err := core.Run(ctx, c.core(), func(rt backend.Device, _ *core.Tracker) (info, error) {
		n, r, _, err := rt.CollCommInfo(c.h)
		return info{n, r}, err
	}).Await(ctx)
	if err != nil {
		return fmt.Errorf("collective: rank %d of %d on device %d: %w", c.rank, c.count, c.dev.Ordinal(), err)
	}
	if got.count != c.count || got.rank != c.rank {
		return fmt.Errorf("collective: NCCL made rank %d of %d for rank %d of %d on device %d", got.rank, got.count, c.rank, c.count, c.dev.Ordinal())
	}
	return nil
}

func (c *Comm) core() *core.Device { return (*core.Device)(c.dev) }

// Rank is this device's rank in the communicator, 0 to Count()-1.
func (c *Comm) Rank() int { return c.rank }

// Count is the number of ranks in the communicator.
func (c *Comm) Count() int { return c.count }

// Device is the device this rank runs on.
func (c *Comm) Device() *device.Device { return c.dev }

// Err is the communicator's asynchronous error (ncclCommGetAsyncError): nil while it is
// healthy or still busy, an *Error once NCCL found it failed (a peer gone, a network
// error), ErrAborted after Abort. Once it fails, Abort it.
func (c *Comm) Err(ctx context.Context) error {
	if c == nil {
		return core.Invalid("collective: Err of a nil communicator")
	}
	if err := c.alive("Err"); err != nil {
		return err
	}
	err := core.Do(ctx, c.core(), func(rt backend.Device, _ *core.Tracker) error {
		if err := c.alive("Err"); err != nil {
			return err
		}
		return rt.CollCommAsyncError(c.h)
	})
	if errors.Is(err, backend.ErrCollInProgress) {
		return nil
	}
	return err
}

// alive refuses a communicator that was finalized, closed or aborted; what names the call.
func (c *Comm) alive(what string) error {
	switch c.state.Load() {
	case stLive:
		return nil
	case stAborted:
		return fmt.Errorf("collective: %s on rank %d of %d (device %d): %w", what, c.rank, c.count, c.dev.Ordinal(), ErrAborted)
	default:
		return core.Closed("collective: %s on rank %d of %d (device %d): the communicator was finalized or closed", what, c.rank, c.count, c.dev.Ordinal())
	}
}

// Abort stops everything the communicator has in progress, its queued kernels included,
// and frees it (ncclCommAbort): the way out of a communicator whose peers are gone or that
// failed. Every later operation on it fails with ErrAborted. It returns once NCCL has
// aborted the rank; aborting twice, or after Close, does nothing. A wait on dev's actor for
// this communicator (an operation NCCL was still setting up) ends at once. When dev's actor
// is parked inside a blocking NCCL call on this communicator (waiting for a peer), Abort
// calls ncclCommAbort from the calling goroutine, which NCCL documents as the way to free
// such a call, and returns without waiting for the actor; on an isolated device the worker's
// actor is out of reach, and only the worker's end frees it.
func (c *Comm) Abort(ctx context.Context) error {
	if c == nil {
		return core.Invalid("collective: Abort of a nil communicator")
	}
	c.abortReq.Store(true)
	if done, err := c.abortElsewhere(true, 0); done {
		return err
	}
	return core.Do(ctx, c.core(), func(rt backend.Device, _ *core.Tracker) error {
		return c.abortOnThread(rt)
	})
}

// abortOnThread aborts the comm once, on the actor thread.
func (c *Comm) abortOnThread(rt backend.Device) error {
	for {
		st := c.state.Load()
		if st == stClosed || st == stAborted {
			return nil
		}
		if c.state.CompareAndSwap(st, stAborted) {
			return rt.CollCommAbort(c.h)
		}
	}
}

// Finalize flushes the operations the communicator has queued and releases its resources
// shared with peers (ncclCommFinalize), returning once NCCL is done; Close then frees it.
// Operations after Finalize are refused. When ctx ends first the communicator is aborted
// (from another goroutine, when a blocking finalize parks dev's actor).
func (c *Comm) Finalize(ctx context.Context) error {
	if c == nil {
		return core.Invalid("collective: Finalize of a nil communicator")
	}
	c.closeMu.Lock()
	defer c.closeMu.Unlock()
	return c.finalize(ctx)
}

func (c *Comm) finalize(ctx context.Context) error {
	switch c.state.Load() {
	case stFinalizing:
		return nil
	case stLive:
	default:
		return c.alive("Finalize")
	}
	doCtx := ctx
	if c.parks() {
		// ctx's end aborts a parked finalize from another goroutine; the caller then waits
		// for the actor to come back from NCCL, which is prompt, and says so.
		doCtx = context.WithoutCancel(ctx)
	}
	err := core.Do(doCtx, c.core(), func(rt backend.Device, _ *core.Tracker) error {
		if err := c.alive("Finalize"); err != nil {
			return err
		}
		c.state.Store(stFinalizing)
		err := c.parked(ctx, rt, func() error { return rt.CollCommFinalize(c.h) })
		if err != nil && !errors.Is(err, backend.ErrCollInProgress) {
			return err
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("collective: Finalize of rank %d of %d on device %d: %w", c.rank, c.count, c.dev.Ordinal(), err)
	}
	return c.ready(ctx, c.h, "finalizing")
}

// Close finalizes the communicator (see Finalize) and frees it (ncclCommDestroy),
// returning once it is freed. Closing a closed or aborted communicator does nothing. When
// ctx ends first, or finalizing fails, the communicator is aborted instead, so that the
// device is left with nothing of it. A blocking communicator's finalize may wait on its
// peers: close the ranks of one process from a goroutine each, as Ranks.Close does.
func (c *Comm) Close(ctx context.Context) error {
	if c == nil {
		return core.Invalid("collective: Close of a nil communicator")
	}
	c.closeMu.Lock()
	defer c.closeMu.Unlock()
	if st := c.state.Load(); st == stClosed || st == stAborted {
		return nil
	}
	if err := c.finalize(ctx); err != nil {
		return errors.Join(err, c.Abort(context.WithoutCancel(ctx)))
	}
	return core.Do(context.WithoutCancel(ctx), c.core(), func(rt backend.Device, _ *core.Tracker) error {
		if !c.state.CompareAndSwap(stFinalizing, stClosed) {
			return nil // aborted meanwhile
		}
		return rt.CollCommDestroy(c.h)
	})
}
