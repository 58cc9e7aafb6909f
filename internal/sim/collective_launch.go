package sim

import (
	"fmt"
	"math/bits"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// A launch: its operations checked when CollLaunch is called, then run as one task on the
// stream, which sends every contribution and then waits for every result.

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
