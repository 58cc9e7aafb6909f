package collective

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
	isim "github.com/gpuactor/gpuactor/internal/sim"
)

// A stand-in for NCCL behind the simulator's devices: it moves no data (the GPU tests and
// the simulator's collectives check results), but keeps NCCL's non-blocking protocol —
// a rank's join is in progress until every rank has joined, operations and finalizes may be
// left in progress — and records every call, so the package's polling, aborting and
// grouping is tested without a GPU.

type fakeHub struct {
	mu      sync.Mutex
	nextID  byte
	comms   map[backend.Comm]*fakeComm
	joined  map[byte]int // ranks joined per id
	next    backend.Comm
	polls   int // CollCommAsyncError calls
	pending int // polls an operation or finalize stays in progress
	failAt  error
}

type fakeComm struct {
	id        byte
	nranks    int
	rank      int
	dev       int
	busy      int // polls left before a launch or finalize is done
	aborted   bool
	destroyed bool
	finalized bool
	launches  [][]backend.CollOp
	streams   []backend.Stream
}

func newFakeHub() *fakeHub {
	return &fakeHub{comms: map[backend.Comm]*fakeComm{}, joined: map[byte]int{}, next: 0x100}
}

type fakeBackend struct {
	backend.Backend
	hub *fakeHub
}

func (b fakeBackend) Open(ordinal int) (backend.Device, error) {
	d, err := b.Backend.Open(ordinal)
	if err != nil {
		return nil, err
	}
	return &fakeDevice{Device: d, hub: b.hub, ordinal: ordinal}, nil
}

type fakeDevice struct {
	backend.Device
	hub     *fakeHub
	ordinal int
}

func (d *fakeDevice) CollVersion() (int, error) { return 22803, nil }

func (d *fakeDevice) CollUniqueID() (backend.CommID, error) {
	d.hub.mu.Lock()
	defer d.hub.mu.Unlock()
	d.hub.nextID++
	var id backend.CommID
	id[0] = d.hub.nextID
	return id, nil
}

func (d *fakeDevice) CollCommInitRank(nranks int, id backend.CommID, rank int, _ backend.CommConfig) (backend.Comm, error) {
	h := d.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	h.next++
	h.comms[h.next] = &fakeComm{id: id[0], nranks: nranks, rank: rank, dev: d.ordinal}
	h.joined[id[0]]++
	return h.next, backend.ErrCollInProgress
}

func (d *fakeDevice) comm(c backend.Comm) (*fakeComm, error) {
	fc, ok := d.hub.comms[c]
	if !ok || fc.aborted || fc.destroyed {
		return nil, &backend.CollError{Code: backend.CollInvalidArgument, Call: "fake", Detail: "no such comm"}
	}
	return fc, nil
}

func (d *fakeDevice) CollCommSplit(backend.Comm, int, int, backend.CommConfig) (backend.Comm, error) {
	return 0, &backend.CollError{Code: backend.CollInvalidUsage, Call: "ncclCommSplit", Detail: "not in the fake"}
}

func (d *fakeDevice) CollCommAsyncError(c backend.Comm) error {
	h := d.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	h.polls++
	fc, err := d.comm(c)
	if err != nil {
		return err
	}
	if h.failAt != nil {
		return h.failAt
	}
	if h.joined[fc.id] < fc.nranks {
		return backend.ErrCollInProgress
	}
	if fc.busy > 0 {
		fc.busy--
		return backend.ErrCollInProgress
	}
	return nil
}

func (d *fakeDevice) CollCommInfo(c backend.Comm) (int, int, int, error) {
	d.hub.mu.Lock()
	defer d.hub.mu.Unlock()
	fc, err := d.comm(c)
	if err != nil {
		return 0, 0, 0, err
	}
	return fc.nranks, fc.rank, fc.dev, nil
}

func (d *fakeDevice) CollLaunch(c backend.Comm, s backend.Stream, ops []backend.CollOp) error {
	h := d.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	fc, err := d.comm(c)
	if err != nil {
		return err
	}
	fc.launches = append(fc.launches, append([]backend.CollOp(nil), ops...))
	fc.streams = append(fc.streams, s)
	if h.pending > 0 {
		fc.busy = h.pending
		return backend.ErrCollInProgress
	}
	return nil
}

func (d *fakeDevice) CollCommFinalize(c backend.Comm) error {
	h := d.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	fc, err := d.comm(c)
	if err != nil {
		return err
	}
	fc.finalized = true
	fc.busy = 2
	return backend.ErrCollInProgress
}

func (d *fakeDevice) CollCommDestroy(c backend.Comm) error {
	d.hub.mu.Lock()
	defer d.hub.mu.Unlock()
	fc, err := d.comm(c)
	if err != nil {
		return err
	}
	fc.destroyed = true
	return nil
}

func (d *fakeDevice) CollCommAbort(c backend.Comm) error {
	d.hub.mu.Lock()
	defer d.hub.mu.Unlock()
	fc, err := d.comm(c)
	if err != nil {
		return err
	}
	fc.aborted = true
	return nil
}

// get is the hub's record of c (under the lock, for a test reading it).
func (h *fakeHub) get(c *Comm) fakeComm {
	h.mu.Lock()
	defer h.mu.Unlock()
	return *h.comms[c.h]
}

// fakeDevices opens n simulated devices whose collectives are the hub's.
func fakeDevices(t *testing.T, ctx context.Context, n int) ([]*device.Device, *fakeHub) {
	t.Helper()
	hub := newFakeHub()
	be := fakeBackend{Backend: isim.New(isim.WithDevices(n)), hub: hub}
	devs := make([]*device.Device, n)
	for i := range devs {
		cd, err := core.Open(ctx, be, core.Config{}, i)
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, cd.Close()) })
		devs[i] = (*device.Device)(cd)
	}
	return devs, hub
}
