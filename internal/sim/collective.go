package sim

import (
	"fmt"
	"math/bits"
	"sync"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// The simulator's NCCL: functional only, with no speed model. Results equal NCCL's for every
// collective, element type and reduction (floating sums in rank order: NCCL's order depends
// on its algorithm, so only results exact in any order compare bit for bit). Communicators are
// non-blocking, as the contract makes them: InitRank and CommSplit return at once, and
// CollCommAsyncError reports ErrCollInProgress until every rank has joined. A launch's
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

// collStep is one operation of a launch, with what this rank sends and receives.
type collStep struct {
	op         backend.CollOp
	seq        uint64 // the collective's, or the transfer's between the pair
	sendBytes  uint64 // 0: this rank sends nothing
	recvBytes  uint64 // 0: this rank receives nothing
	collective bool
}

// CollLaunch checks ops and queues them on s as one task: see backend.CollectiveDevice.
func (d *device) CollLaunch(h backend.Comm, sh backend.Stream, ops []backend.CollOp) error {
	call := "ncclGroupEnd"
	if len(ops) == 1 {
		call = collCall(ops[0].Kind)
	}
	if err := d.collAlive(call); err != nil {
		return err
	}
	c, err := d.comm(call, h)
	if err != nil {
		return err
	}
	c.mu.Lock()
	err = c.readyLocked(call)
	nranks, rank := c.nranks, c.rank
	c.mu.Unlock()
	if err != nil {
		return err
	}
	st, bad := d.collStream(sh)
	if bad != "" {
		return collErr(call, backend.CollInvalidArgument, "%s", bad)
	}
	d.graphs.mu.Lock()
	capturing := d.graphs.captures[st] != nil
	d.graphs.mu.Unlock()
	if capturing {
		return collErr(call, backend.CollInvalidUsage, "stream %#x is capturing: the simulator does not model collectives in graphs", uintptr(sh))
	}
	if len(ops) == 0 {
		return nil
	}
	steps := make([]collStep, 0, len(ops))
	for i, op := range ops {
		step, bad := d.planStep(op, nranks, rank)
		if bad != "" {
			if len(ops) > 1 {
				return collErr(collCall(op.Kind), backend.CollInvalidArgument, "operation %d of the group: %s", i, bad)
			}
			return collErr(collCall(op.Kind), backend.CollInvalidArgument, "%s", bad)
		}
		if op.Count > 0 {
			steps = append(steps, step)
		}
	}
	if len(steps) == 0 {
		return nil
	}
	// Every check passed: only now take sequence numbers, so a refused launch leaves the
	// rank in step with its peers.
	for i := range steps {
		s := &steps[i]
		switch {
		case s.collective:
			s.seq = c.collSeq
			c.collSeq++
		case s.op.Kind == backend.CollSend:
			s.seq = c.sendSeq[int(s.op.Peer)]
			c.sendSeq[int(s.op.Peer)]++
		default:
			s.seq = c.recvSeq[int(s.op.Peer)]
			c.recvSeq[int(s.op.Peer)]++
		}
	}
	c.mu.Lock()
	c.outstanding++
	c.mu.Unlock()
	d.submit(st, &task{name: call, always: true, run: func() { c.run(steps) }})
	return nil
}

// collStream looks up a live stream of d, as ownStream does but without touching CUDA's last
// error: a refused collective is NCCL's error, not the runtime's.
func (d *device) collStream(h backend.Stream) (*stream, string) {
	if h == 0 {
		return d.null, ""
	}
	d.b.mu.RLock()
	s := d.b.streams[h]
	d.b.mu.RUnlock()
	switch {
	case s == nil:
		return nil, fmt.Sprintf("stream %#x is not a live stream (destroyed, or never created)", uintptr(h))
	case s.dev != d:
		return nil, fmt.Sprintf("stream %#x belongs to device %d, not device %d", uintptr(h), s.dev.ordinal, d.ordinal)
	}
	return s, ""
}

// planStep checks one operation against the communicator and this device's memory.
func (d *device) planStep(op backend.CollOp, nranks, rank int) (collStep, string) {
	s := collStep{op: op}
	z := collElemSize(op.Type)
	if z == 0 || op.Type < 0 {
		return s, fmt.Sprintf("unknown data type %d", op.Type)
	}
	reduces := op.Kind == backend.CollAllReduce || op.Kind == backend.CollReduce || op.Kind == backend.CollReduceScatter
	if reduces && (op.Op < backend.CollSum || op.Op > backend.CollAvg) {
		return s, fmt.Sprintf("unknown reduction %d", op.Op)
	}
	hasPeer := op.Kind != backend.CollAllReduce && op.Kind != backend.CollAllGather && op.Kind != backend.CollReduceScatter
	if hasPeer && (op.Peer < 0 || int(op.Peer) >= nranks) {
		what := "root"
		if op.Kind == backend.CollSend || op.Kind == backend.CollRecv {
			what = "peer"
		}
		return s, fmt.Sprintf("%s %d out of range [0, %d)", what, op.Peer, nranks)
	}
	hi, one := bits.Mul64(op.Count, z)
	hiN, all := bits.Mul64(one, uint64(nranks))
	if hi != 0 || hiN != 0 || all > maxFrame {
		return s, fmt.Sprintf("count %d of %d-byte elements overflows", op.Count, z)
	}
	root := int(op.Peer) == rank
	switch op.Kind {
	case backend.CollAllReduce:
		s.sendBytes, s.recvBytes, s.collective = one, one, true
	case backend.CollBroadcast:
		s.recvBytes, s.collective = one, true
		if root {
			s.sendBytes = one
		}
	case backend.CollReduce:
		s.sendBytes, s.collective = one, true
		if root {
			s.recvBytes = one
		}
	case backend.CollAllGather:
		s.sendBytes, s.recvBytes, s.collective = one, all, true
	case backend.CollReduceScatter:
		s.sendBytes, s.recvBytes, s.collective = all, one, true
	case backend.CollSend:
		s.sendBytes = one
	case backend.CollRecv:
		s.recvBytes = one
	default:
		return s, fmt.Sprintf("unknown operation kind %d", op.Kind)
	}
	if op.Count == 0 {
		return s, ""
	}
	if s.sendBytes > 0 {
		if _, detail := d.resolve(op.Send, s.sendBytes); detail != "" {
			return s, fmt.Sprintf("%s send buffer (%d bytes): %s", collCall(op.Kind), s.sendBytes, detail)
		}
	}
	if s.recvBytes > 0 {
		if _, detail := d.resolve(op.Recv, s.recvBytes); detail != "" {
			return s, fmt.Sprintf("%s receive buffer (%d bytes): %s", collCall(op.Kind), s.recvBytes, detail)
		}
	}
	return s, ""
}

// run is a launch's work on its stream: send every contribution, then wait for every result
// and write it, so that a group's sends and receives never wait on each other.
func (c *simComm) run(steps []collStep) {
	d := c.dev
	defer func() {
		c.mu.Lock()
		c.outstanding--
		c.cond.Broadcast()
		c.mu.Unlock()
	}()
	c.mu.Lock()
	stop := c.err != nil || c.closed
	c.mu.Unlock()
	if stop {
		return
	}
	if f := d.fault.Load(); f != nil {
		c.failAndLeave(backend.CollUnhandledCudaError, f.err("ncclGroupEnd").Error())
		return
	}
	for _, s := range steps {
		var data []byte
		if s.sendBytes > 0 {
			span, detail := d.resolve(s.op.Send, s.sendBytes)
			if detail != "" {
				d.setFault(cudaerr.IllegalAddress, collCall(s.op.Kind)+" send buffer: "+detail)
				c.failAndLeave(backend.CollUnhandledCudaError, collCall(s.op.Kind)+" send buffer: "+detail)
				return
			}
			data = append([]byte(nil), span...)
		}
		if s.collective {
			w := newMsg(msgColl)
			w.u64(s.seq)
			w.u8(byte(s.op.Kind))
			w.u8(byte(s.op.Type))
			op := s.op.Op
			if s.op.Kind == backend.CollBroadcast || s.op.Kind == backend.CollAllGather {
				op = 0 // no reduction: ranks need not agree on it
			}
			w.u8(byte(op))
			root := s.op.Peer
			if s.op.Kind != backend.CollBroadcast && s.op.Kind != backend.CollReduce {
				root = 0
			}
			w.i32(root)
			w.u64(s.op.Count)
			w.bytes(data)
			c.post(w)
		} else if s.op.Kind == backend.CollSend {
			w := newMsg(msgSend)
			w.u32(uint32(s.op.Peer))
			w.u64(s.seq)
			w.u64(s.op.Count)
			w.u8(byte(s.op.Type))
			w.bytes(data)
			c.post(w)
		}
	}
	for _, s := range steps {
		if !s.collective && s.op.Kind == backend.CollSend {
			continue
		}
		var got []byte
		c.mu.Lock()
		var werr *backend.CollError
		if s.collective {
			werr = c.waitLocked(func() bool { _, ok := c.results[s.seq]; return ok })
			got = c.results[s.seq]
			delete(c.results, s.seq)
		} else {
			key := p2pKey{int(s.op.Peer), s.seq}
			werr = c.waitLocked(func() bool { _, ok := c.data[key]; return ok || c.gone[key.src] })
			got = c.data[key]
			delete(c.data, key)
			if werr == nil && got == nil {
				c.failLocked(backend.CollRemoteError, fmt.Sprintf("rank %d left the communicator before sending what ncclRecv %d waits for", key.src, s.seq))
				werr = c.err
			}
		}
		c.mu.Unlock()
		if werr != nil {
			return
		}
		if s.recvBytes == 0 {
			continue
		}
		if uint64(len(got)) != s.recvBytes {
			c.failAndLeave(backend.CollInvalidUsage, fmt.Sprintf("%s expected %d bytes from rank %d, and %d came: the ranks' counts or types differ",
				collCall(s.op.Kind), s.recvBytes, s.op.Peer, len(got)))
			return
		}
		span, detail := d.resolve(s.op.Recv, s.recvBytes)
		if detail != "" {
			d.setFault(cudaerr.IllegalAddress, collCall(s.op.Kind)+" receive buffer: "+detail)
			c.failAndLeave(backend.CollUnhandledCudaError, collCall(s.op.Kind)+" receive buffer: "+detail)
			return
		}
		copy(span, got)
	}
}
