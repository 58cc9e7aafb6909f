package sim

import (
	"fmt"
	"sync"

	"github.com/gpuactor/gpuactor/internal/backend"
)

// The simulator's NCCL: functional only, with no speed model. Results equal NCCL's for every
// collective, element type and reduction (floating sums in rank order: NCCL's order depends
// on its algorithm, so only results exact in any order compare bit for bit). Every
// communicator behaves as a non-blocking one, CommConfig.Blocking or not (the contract lets a
// blocking call return early, and its callers poll either way): InitRank and CommSplit return
// at once, and CollCommAsyncError reports ErrCollInProgress until every rank has joined. So
// the simulator never parks an actor in a collective call, and has no any-thread abort. A launch's
// operations run on the stream in stream order, each waiting there for the other ranks'
// matching operations, as an NCCL kernel waits for its peers; a peer that leaves or drops
// fails the communicator for every rank rather than leave them waiting.
//
// Where the simulator is stricter than NCCL, it fails rather than hang or corrupt: a
// collective whose ranks disagree on its kind, count, type, reduction or root fails the
// communicator with InvalidUsage; CollCommDestroy with operations still outstanding is
// refused (finalize and poll, or abort); a launch on a capturing stream is refused, since
// replaying a graph would repeat the operations' sequence numbers.

// collVersion is the NCCL version the simulator models (2.28.3).
const collVersion = 22803

// collState is a device's communicator ranks.
type collState struct {
	mu    sync.Mutex
	comms map[backend.Comm]*simComm
}

// collErr is a CollError of call.
func collErr(call string, code int32, format string, args ...any) error {
	return &backend.CollError{Code: code, Call: call, Detail: fmt.Sprintf(format, args...)}
}

// collAlive fails a call on a faulted device as NCCL does when CUDA fails under it.
func (d *device) collAlive(call string) error {
	if f := d.fault.Load(); f != nil {
		return collErr(call, backend.CollUnhandledCudaError, "%v", f.err(call))
	}
	return nil
}

// comm looks up a live communicator rank of d.
func (d *device) comm(call string, h backend.Comm) (*simComm, error) {
	d.coll.mu.Lock()
	c := d.coll.comms[h]
	d.coll.mu.Unlock()
	if c != nil {
		return c, nil
	}
	for _, o := range d.b.devices {
		if o == d {
			continue
		}
		o.coll.mu.Lock()
		other := o.coll.comms[h]
		o.coll.mu.Unlock()
		if other != nil {
			return nil, collErr(call, backend.CollInvalidArgument, "communicator %#x is device %d's rank, not device %d's", uintptr(h), o.ordinal, d.ordinal)
		}
	}
	return nil, collErr(call, backend.CollInvalidArgument, "communicator %#x is not a live communicator of device %d (destroyed, aborted, or never made)", uintptr(h), d.ordinal)
}

func (d *device) addComm(c *simComm) {
	d.coll.mu.Lock()
	if d.coll.comms == nil {
		d.coll.comms = map[backend.Comm]*simComm{}
	}
	d.coll.comms[c.h] = c
	d.coll.mu.Unlock()
}

func (d *device) dropComm(c *simComm) {
	d.coll.mu.Lock()
	delete(d.coll.comms, c.h)
	d.coll.mu.Unlock()
}

// readyLocked is NCCL's check before a communicator is used: its failure, or InvalidArgument
// while it is still joining.
func (c *simComm) readyLocked(call string) error {
	switch {
	case c.err != nil:
		return &backend.CollError{Code: c.err.Code, Call: call, Detail: c.err.Detail}
	case !c.ready:
		return collErr(call, backend.CollInvalidArgument, "communicator %#x used before it finished joining: poll CollCommAsyncError until it returns nil", uintptr(c.h))
	case c.finalizing:
		return collErr(call, backend.CollInvalidUsage, "communicator %#x is finalized", uintptr(c.h))
	}
	return nil
}

// checkConfig refuses what ncclCommInitRankConfig would.
func checkConfig(call string, cfg backend.CommConfig) error {
	switch {
	case cfg.CGAClusterSize < 0 || cfg.MinCTAs < 0 || cfg.MaxCTAs < 0:
		return collErr(call, backend.CollInvalidArgument, "negative config value (cgaClusterSize %d, minCTAs %d, maxCTAs %d)", cfg.CGAClusterSize, cfg.MinCTAs, cfg.MaxCTAs)
	case cfg.MinCTAs > 0 && cfg.MaxCTAs > 0 && cfg.MinCTAs > cfg.MaxCTAs:
		return collErr(call, backend.CollInvalidArgument, "minCTAs %d is more than maxCTAs %d", cfg.MinCTAs, cfg.MaxCTAs)
	}
	return nil
}

// CollVersion is the NCCL version the simulator models.
func (d *device) CollVersion() (int, error) { return collVersion, nil }

// CollUniqueID makes a communicator id naming this process's rendezvous root.
func (d *device) CollUniqueID() (backend.CommID, error) {
	const call = "ncclGetUniqueId"
	if err := d.collAlive(call); err != nil {
		return backend.CommID{}, err
	}
	id, err := newCommID()
	if err != nil {
		return id, collErr(call, backend.CollSystemError, "%v", err)
	}
	return id, nil
}

// CollCommInitRank starts joining id's communicator; see backend.CollectiveDevice.
func (d *device) CollCommInitRank(nranks int, id backend.CommID, rank int, cfg backend.CommConfig) (backend.Comm, error) {
	const call = "ncclCommInitRankConfig"
	if err := d.collAlive(call); err != nil {
		return 0, err
	}
	if nranks < 1 {
		return 0, collErr(call, backend.CollInvalidArgument, "nranks %d: a communicator has at least one rank", nranks)
	}
	if rank < 0 || rank >= nranks {
		return 0, collErr(call, backend.CollInvalidArgument, "rank %d out of range [0, %d)", rank, nranks)
	}
	tok, addr, err := decodeID(id)
	if err != nil {
		return 0, collErr(call, backend.CollInvalidArgument, "%v", err)
	}
	if err := checkConfig(call, cfg); err != nil {
		return 0, err
	}
	c := newSimComm(d, addr, nranks, rank)
	d.addComm(c)
	go c.connect(tok, nranks, rank)
	return c.h, nil
}

// CollCommSplit starts splitting c; see backend.CollectiveDevice.
func (d *device) CollCommSplit(h backend.Comm, color, key int, cfg backend.CommConfig) (backend.Comm, error) {
	const call = "ncclCommSplit"
	if err := d.collAlive(call); err != nil {
		return 0, err
	}
	c, err := d.comm(call, h)
	if err != nil {
		return 0, err
	}
	if color < 0 && color != backend.SplitNoColor {
		return 0, collErr(call, backend.CollInvalidArgument, "color %d: a color is non-negative, or SplitNoColor", color)
	}
	if color > 1<<31-1 || key < -1<<31 || key > 1<<31-1 {
		return 0, collErr(call, backend.CollInvalidArgument, "color %d or key %d does not fit NCCL's int", color, key)
	}
	if err := checkConfig(call, cfg); err != nil {
		return 0, err
	}
	c.mu.Lock()
	err = c.readyLocked(call)
	c.mu.Unlock()
	if err != nil {
		return 0, err
	}
	seq := c.splitSeq
	c.splitSeq++
	w := newMsg(msgSplit)
	w.u64(seq)
	w.i32(int32(color))
	w.i32(int32(key))
	c.post(w)
	if color == backend.SplitNoColor {
		go c.forgetSplit(seq)
		return 0, nil
	}
	child := newSimComm(d, c.addr, 0, -1)
	d.addComm(child)
	go func() {
		c.mu.Lock()
		werr := c.waitLocked(func() bool { _, ok := c.splits[seq]; return ok })
		p := c.splits[seq]
		delete(c.splits, seq)
		c.mu.Unlock()
		if werr != nil {
			child.mu.Lock()
			child.failLocked(werr.Code, "the parent communicator failed during the split: "+werr.Detail)
			child.mu.Unlock()
			return
		}
		child.connect(p.tok, p.nranks, p.rank)
	}()
	return child.h, nil
}

// forgetSplit drops the answer to a split this rank took no part of.
func (c *simComm) forgetSplit(seq uint64) {
	c.mu.Lock()
	_ = c.waitLocked(func() bool { _, ok := c.splits[seq]; return ok })
	delete(c.splits, seq)
	c.mu.Unlock()
}

// CollCommAsyncError is nil, ErrCollInProgress or c's failure.
func (d *device) CollCommAsyncError(h backend.Comm) error {
	const call = "ncclCommGetAsyncError"
	c, err := d.comm(call, h)
	if err != nil {
		return err
	}
	if f := d.fault.Load(); f != nil {
		// CUDA failed under the communicator: it fails, and its peers with it.
		c.failAndLeave(backend.CollUnhandledCudaError, f.err(call).Error())
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.err != nil:
		return c.err
	case !c.ready, c.finalizing && c.outstanding > 0:
		return backend.ErrCollInProgress
	}
	return nil
}

// CollCommInfo is c's size, this rank and its device.
func (d *device) CollCommInfo(h backend.Comm) (count, rank, device int, err error) {
	const call = "ncclCommCount"
	c, err := d.comm(call, h)
	if err != nil {
		return 0, 0, 0, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil && !c.ready {
		return 0, 0, 0, c.readyLocked(call)
	}
	if c.nranks == 0 {
		return 0, 0, 0, c.readyLocked(call) // a split that failed before placing this rank
	}
	return c.nranks, c.rank, d.ordinal, nil
}

// CollCommFinalize starts flushing c: CollCommAsyncError reports ErrCollInProgress until every
// operation launched on it has finished.
func (d *device) CollCommFinalize(h backend.Comm) error {
	const call = "ncclCommFinalize"
	c, err := d.comm(call, h)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.finalizing {
		return collErr(call, backend.CollInvalidUsage, "communicator %#x is already finalized", uintptr(h))
	}
	if c.err == nil && !c.ready {
		return c.readyLocked(call)
	}
	c.finalizing = true
	return nil
}

// CollCommDestroy frees c and leaves its communicator cleanly. It refuses while operations
// launched on c are outstanding, where NCCL would block the calling thread.
func (d *device) CollCommDestroy(h backend.Comm) error {
	const call = "ncclCommDestroy"
	c, err := d.comm(call, h)
	if err != nil {
		return err
	}
	c.mu.Lock()
	if n := c.outstanding; n > 0 && c.err == nil {
		c.mu.Unlock()
		return collErr(call, backend.CollInvalidUsage, "communicator %#x has %d launch(es) outstanding: finalize it and poll CollCommAsyncError until nil, or abort it", uintptr(h), n)
	}
	c.closed = true
	out := c.out
	c.cond.Broadcast()
	c.mu.Unlock()
	d.dropComm(c)
	if out != nil {
		out.put(newMsg(msgBye))
		out.close()
	}
	return nil
}

// CollCommAbort frees c at once: its pending operations end, and its connection drops, which
// fails the communicator for every other rank.
func (d *device) CollCommAbort(h backend.Comm) error {
	c, err := d.comm("ncclCommAbort", h)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.closed = true
	out := c.out
	c.cond.Broadcast()
	c.mu.Unlock()
	d.dropComm(c)
	if out != nil {
		out.kill()
	}
	return nil
}
