package collective

import (
	"fmt"

	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
	"github.com/gpuactor/gpuactor/streams"
)

// Op is one collective operation of one rank, on a stream of its device: made by
// AllReduceOp, BroadcastOp, ReduceOp…, run alone by Launch or with others by a Group. A
// mistake the constructor can see (a nil buffer, lengths that do not fit, a root or peer out
// of range, a buffer or stream of another device) is kept in the Op and refuses its launch
// before NCCL sees it.
type Op struct {
	name  string
	c     *Comm
	s     *streams.Stream
	kind  backend.CollOpKind
	send  device.Mem // nil where the kind reads nothing (Recv; Broadcast and Reduce off the root)
	recv  device.Mem
	sendN uint64 // bytes of send and recv the operation uses
	recvN uint64
	count uint64
	dt    backend.CollDataType
	red   backend.CollRedOp
	peer  int
	err   error
}

// Err is the mistake that will refuse the operation's launch, or nil.
func (o Op) Err() error { return o.err }

// newOp checks what every operation shares: the comm, the stream and its device.
func newOp[T Elem](name string, c *Comm, s *streams.Stream, kind backend.CollOpKind) Op {
	o := Op{name: name, c: c, s: s, kind: kind, dt: dataType[T]()}
	switch {
	case c == nil:
		o.err = core.Invalid("collective: %s on a nil communicator", name)
	case s == nil:
		o.err = core.Invalid("collective: %s on a nil stream", name)
	case s.Device() != c.dev:
		o.err = fmt.Errorf("%w: collective: %s of rank %d (device %d) on a stream of device %d", core.ErrWrongDevice, name, c.rank, c.dev.Ordinal(), s.Device().Ordinal())
	}
	return o
}

// fail keeps the op's first mistake.
func (o *Op) fail(err error) {
	if o.err == nil {
		o.err = err
	}
}

// buffer checks one buffer: present (when needed) and on the comm's device.
func buffer[T Elem](o *Op, what string, b *alloc.Buffer[T], needed bool) (device.Mem, bool) {
	if b == nil || b.Buffer == nil {
		if needed {
			o.fail(core.Invalid("collective: %s: the %s buffer is nil", o.name, what))
		}
		return nil, false
	}
	if o.c != nil && b.Device() != o.c.dev {
		o.fail(fmt.Errorf("%w: collective: %s of rank %d (device %d): the %s buffer is on device %d", core.ErrWrongDevice, o.name, o.c.rank, o.c.dev.Ordinal(), what, b.Device().Ordinal()))
		return nil, false
	}
	return b, true
}

// rank checks a root or peer rank and records it.
func (o *Op) rank(what string, r int) {
	if o.c != nil && (r < 0 || r >= o.c.count) {
		o.fail(core.OutOfRange("collective: %s: %s %d of a communicator of %d ranks (0 to %d)", o.name, what, r, o.c.count, o.c.count-1))
	}
	o.peer = r
}

func (o *Op) reduction(op Reduction) {
	if !op.valid() {
		o.fail(core.Invalid("collective: %s: reduction %v", o.name, op))
	}
	o.red = backend.CollRedOp(op)
}

// fits checks that a buffer of have elements holds the want elements the operation uses.
func (o *Op) fits(what string, have int, want uint64, why string) {
	if uint64(have) < want {
		o.fail(core.OutOfRange("collective: %s: the %s buffer holds %d elements, %d needed (%s)", o.name, what, have, want, why))
	}
}

// AllReduceOp reduces send across the ranks with op and leaves the result in recv on every
// rank (ncclAllReduce): count is send's length, and recv must hold as many. send and recv
// may be the same buffer (in place).
func AllReduceOp[T Elem](s *streams.Stream, c *Comm, send, recv *alloc.Buffer[T], op Reduction) Op {
	o := newOp[T]("AllReduce", c, s, backend.CollAllReduce)
	o.reduction(op)
	var ok bool
	if o.send, ok = buffer(&o, "send", send, true); ok {
		o.count = uint64(send.Len())
	}
	if o.recv, ok = buffer(&o, "receive", recv, true); ok {
		o.fits("receive", recv.Len(), o.count, "the send buffer's length")
	}
	return o.sized(send.ElemSize(), o.count, o.count)
}

// BroadcastOp copies the root's send into recv on every rank (ncclBroadcast): count is
// recv's length, and the root's send must hold as many. Off the root send may be nil.
func BroadcastOp[T Elem](s *streams.Stream, c *Comm, send, recv *alloc.Buffer[T], root int) Op {
	o := newOp[T]("Broadcast", c, s, backend.CollBroadcast)
	o.rank("root", root)
	var ok bool
	if o.recv, ok = buffer(&o, "receive", recv, true); ok {
		o.count = uint64(recv.Len())
	}
	isRoot := c != nil && c.rank == root
	sendN := uint64(0)
	if o.send, ok = buffer(&o, "send", send, isRoot); ok {
		o.fits("send", send.Len(), o.count, "the receive buffer's length")
		sendN = o.count
	}
	return o.sized(recv.ElemSize(), sendN, o.count)
}

// ReduceOp reduces send across the ranks with op into the root's recv (ncclReduce): count
// is send's length, and the root's recv must hold as many. Off the root recv may be nil.
func ReduceOp[T Elem](s *streams.Stream, c *Comm, send, recv *alloc.Buffer[T], op Reduction, root int) Op {
	o := newOp[T]("Reduce", c, s, backend.CollReduce)
	o.reduction(op)
	o.rank("root", root)
	var ok bool
	if o.send, ok = buffer(&o, "send", send, true); ok {
		o.count = uint64(send.Len())
	}
	isRoot := c != nil && c.rank == root
	recvN := uint64(0)
	if o.recv, ok = buffer(&o, "receive", recv, isRoot); ok {
		o.fits("receive", recv.Len(), o.count, "the send buffer's length")
		recvN = o.count
	}
	return o.sized(send.ElemSize(), o.count, recvN)
}

// AllGatherOp gathers every rank's send into recv on every rank, rank r's at elements
// [r·n, (r+1)·n) where n is send's length (ncclAllGather): recv must hold n × Count().
func AllGatherOp[T Elem](s *streams.Stream, c *Comm, send, recv *alloc.Buffer[T]) Op {
	o := newOp[T]("AllGather", c, s, backend.CollAllGather)
	var ok bool
	if o.send, ok = buffer(&o, "send", send, true); ok {
		o.count = uint64(send.Len())
	}
	total := o.count * uint64(o.ranks())
	if o.recv, ok = buffer(&o, "receive", recv, true); ok {
		o.fits("receive", recv.Len(), total, "the send buffer's length × the rank count")
	}
	return o.sized(send.ElemSize(), o.count, total)
}

// ReduceScatterOp reduces send across the ranks with op and leaves block r of the result,
// elements [r·n, (r+1)·n) where n is recv's length, in rank r's recv (ncclReduceScatter):
// send must hold n × Count().
func ReduceScatterOp[T Elem](s *streams.Stream, c *Comm, send, recv *alloc.Buffer[T], op Reduction) Op {
	o := newOp[T]("ReduceScatter", c, s, backend.CollReduceScatter)
	o.reduction(op)
	var ok bool
	if o.recv, ok = buffer(&o, "receive", recv, true); ok {
		o.count = uint64(recv.Len())
	}
	total := o.count * uint64(o.ranks())
	if o.send, ok = buffer(&o, "send", send, true); ok {
		o.fits("send", send.Len(), total, "the receive buffer's length × the rank count")
	}
	return o.sized(recv.ElemSize(), total, o.count)
}

// SendOp sends all of buf to rank peer, which must run a RecvOp of as many elements for
// this rank (ncclSend). Sends and receives between the same ranks in both directions must
// be grouped (Group), or they deadlock.
func SendOp[T Elem](s *streams.Stream, c *Comm, buf *alloc.Buffer[T], peer int) Op {
	o := newOp[T]("Send", c, s, backend.CollSend)
	o.rank("peer", peer)
	var ok bool
	if o.send, ok = buffer(&o, "send", buf, true); ok {
		o.count = uint64(buf.Len())
	}
	return o.sized(buf.ElemSize(), o.count, 0)
}

// RecvOp receives into all of buf from rank peer, which must run a SendOp of as many
// elements for this rank (ncclRecv).
func RecvOp[T Elem](s *streams.Stream, c *Comm, buf *alloc.Buffer[T], peer int) Op {
	o := newOp[T]("Recv", c, s, backend.CollRecv)
	o.rank("peer", peer)
	var ok bool
	if o.recv, ok = buffer(&o, "receive", buf, true); ok {
		o.count = uint64(buf.Len())
	}
	return o.sized(buf.ElemSize(), 0, o.count)
}

// ranks is the comm's rank count, 0 without a comm.
func (o *Op) ranks() int {
	if o.c == nil {
		return 0
	}
	return o.c.count
}

// sized records how many bytes of send and recv the operation uses, checked again on the
// actor thread, where the buffers' state is authoritative.
func (o Op) sized(elem uintptr, sendElems, recvElems uint64) Op {
	o.sendN, o.recvN = sendElems*uint64(elem), recvElems*uint64(elem)
	if o.err == nil && o.count == 0 {
		o.fail(core.Invalid("collective: %s of 0 elements", o.name))
	}
	return o
}

// resolve turns the op into NCCL's arguments, on the actor thread.
func (o *Op) resolve(d *core.Device) (backend.CollOp, error) {
	op := backend.CollOp{Kind: o.kind, Count: o.count, Type: o.dt, Op: o.red, Peer: int32(o.peer)}
	var err error
	if op.Send, err = resolveN(d, o.name+" send buffer", o.send, o.sendN); err != nil {
		return op, err
	}
	if op.Recv, err = resolveN(d, o.name+" receive buffer", o.recv, o.recvN); err != nil {
		return op, err
	}
	return op, nil
}

// resolveN resolves m (nil: address 0) and checks it still holds n bytes.
func resolveN(d *core.Device, what string, m device.Mem, n uint64) (backend.DevicePtr, error) {
	if m == nil {
		return 0, nil
	}
	p, size, err := d.Resolve(what, m)
	if err != nil {
		return 0, err
	}
	if size < n {
		return 0, core.OutOfRange("collective: %s holds %d bytes, %d needed", what, size, n)
	}
	return p, nil
}
