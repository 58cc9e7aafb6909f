package sim

import (
	"bufio"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/gpuactor/gpuactor/internal/backend"
)

// The simulator's collectives run over TCP: every rank of a communicator holds one connection
// to the rendezvous root of the process that made the communicator's id (collective_root.go),
// whether the rank lives in that process or in another. The root matches the ranks' operations
// and computes every result, so ranks in one process and ranks in worker processes behave the
// same. This file is the wire: the id's layout and the framed messages.

// simIDMagic opens every CommID the simulator makes, so that an id from elsewhere (a real
// ncclUniqueId, garbage) is refused rather than dialled.
var simIDMagic = [8]byte{'g', 'p', 'u', 'a', 's', 'i', 'm', 'C'}

// simIDVersion is the layout of the id and the protocol it names.
const simIDVersion = 1

// commToken names one communicator at its root.
type commToken [16]byte

// newToken is 16 random bytes.
func newToken() (commToken, error) {
	var t commToken
	_, err := rand.Read(t[:])
	return t, err
}

// encodeID lays out an id: magic, version, token, then the root's address with its length.
func encodeID(tok commToken, addr string) (backend.CommID, error) {
	var id backend.CommID
	if len(addr) > len(id)-26 {
		return id, fmt.Errorf("root address %q is too long for an id", addr)
	}
	copy(id[:8], simIDMagic[:])
	id[8] = simIDVersion
	copy(id[9:25], tok[:])
	id[25] = byte(len(addr))
	copy(id[26:], addr)
	return id, nil
}

// decodeID reads an id encodeID made, or explains why it is not one.
func decodeID(id backend.CommID) (tok commToken, addr string, err error) {
	if [8]byte(id[:8]) != simIDMagic {
		return tok, "", errors.New("the id was not made by the simulator's CollUniqueID (wrong magic): pass every rank the id one rank made")
	}
	if id[8] != simIDVersion {
		return tok, "", fmt.Errorf("the id has layout version %d, this simulator reads %d", id[8], simIDVersion)
	}
	n := int(id[25])
	if n == 0 || n > len(id)-26 {
		return tok, "", fmt.Errorf("the id's root address length %d is out of range", n)
	}
	copy(tok[:], id[9:25])
	return tok, string(id[26 : 26+n]), nil
}

// Message types. Ranks send hello, coll, send, split and bye; the root sends ready, result,
// data, gone, splitDone and fail.
const (
	msgHello byte = iota + 1
	msgColl
	msgSend
	msgSplit
	msgBye
	msgReady
	msgResult
	msgData
	msgGone
	msgSplitDone
	msgFail
)

// maxFrame bounds one message: a collective's contribution travels whole. Before a
// connection has said hello, a message is held to maxHello, so that a stranger dialling the
// root cannot make it allocate much.
const (
	maxFrame = 1 << 34
	maxHello = 64
)

// wbuf builds one message.
type wbuf struct{ b []byte }

func newMsg(typ byte) *wbuf       { return &wbuf{b: []byte{0, 0, 0, 0, 0, 0, 0, 0, typ}} }
func (w *wbuf) u8(v byte)         { w.b = append(w.b, v) }
func (w *wbuf) u32(v uint32)      { w.b = binary.LittleEndian.AppendUint32(w.b, v) }
func (w *wbuf) u64(v uint64)      { w.b = binary.LittleEndian.AppendUint64(w.b, v) }
func (w *wbuf) i32(v int32)       { w.u32(uint32(v)) }
func (w *wbuf) raw(p []byte)      { w.b = append(w.b, p...) }
func (w *wbuf) bytes(p []byte)    { w.u64(uint64(len(p))); w.raw(p) }
func (w *wbuf) str(s string)      { w.bytes([]byte(s)) }
func (w *wbuf) frame() []byte     { binary.LittleEndian.PutUint64(w.b, uint64(len(w.b)-8)); return w.b }
func (w *wbuf) token(t commToken) { w.raw(t[:]) }

// rbuf reads one message; a short message sets bad and reads zeros.
type rbuf struct {
	b   []byte
	bad bool
}

func (r *rbuf) take(n uint64) []byte {
	if r.bad || uint64(len(r.b)) < n {
		r.bad = true
		return make([]byte, n&0xffff)
	}
	p := r.b[:n:n]
	r.b = r.b[n:]
	return p
}
func (r *rbuf) u8() byte    { return r.take(1)[0] }
func (r *rbuf) u32() uint32 { return binary.LittleEndian.Uint32(r.take(4)) }
func (r *rbuf) u64() uint64 { return binary.LittleEndian.Uint64(r.take(8)) }
func (r *rbuf) i32() int32  { return int32(r.u32()) }
func (r *rbuf) bytes() []byte {
	n := r.u64()
	if n > uint64(len(r.b)) {
		r.bad = true
		return nil
	}
	return r.take(n)
}
func (r *rbuf) str() string { return string(r.bytes()) }
func (r *rbuf) token() (t commToken) {
	copy(t[:], r.take(16))
	return t
}

// readMsg reads one framed message of at most limit bytes: its type and body.
func readMsg(br *bufio.Reader, limit uint64) (byte, *rbuf, error) {
	var hdr [8]byte
	if _, err := io.ReadFull(br, hdr[:]); err != nil {
		return 0, nil, err
	}
	n := binary.LittleEndian.Uint64(hdr[:])
	if n == 0 || n > limit {
		return 0, nil, fmt.Errorf("bad frame length %d", n)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(br, body); err != nil {
		return 0, nil, err
	}
	return body[0], &rbuf{b: body[1:]}, nil
}

// outbox writes a connection's messages in order from its own goroutine, so that no sender
// ever blocks on the peer's reading.
//
// The outbox never closes the connection's read side, except on kill: whoever reads the
// connection closes it once the peer's end arrives. A connection closed with unread data in
// it resets, and a reset can cost the peer what it had not yet read of ours; a write that
// failed closing the whole connection would likewise lose what its reader had not reached
// (a rank's goodbye, read as a dropped connection).
type outbox struct {
	c      net.Conn
	mu     sync.Mutex
	cond   sync.Cond
	queue  [][]byte
	closed bool // no more messages: the writer flushes what is queued, then ends its side
	done   chan struct{}
}

// closeGrace bounds how long a closing connection may take to flush its last messages and to
// read the peer's end.
const closeGrace = 10 * time.Second

func newOutbox(c net.Conn) *outbox {
	o := &outbox{c: c, done: make(chan struct{})}
	o.cond.L = &o.mu
	go o.run()
	return o
}

// put queues one message; after close it is dropped.
func (o *outbox) put(w *wbuf) {
	o.mu.Lock()
	if !o.closed {
		o.queue = append(o.queue, w.frame())
		o.cond.Signal()
	}
	o.mu.Unlock()
}

// close lets the writer flush what is queued and then half-close the connection: the peer
// reads every message, then the end. The connection's reader closes it.
func (o *outbox) close() {
	o.mu.Lock()
	if !o.closed {
		o.closed = true
		_ = o.c.SetDeadline(time.Now().Add(closeGrace))
	}
	o.cond.Signal()
	o.mu.Unlock()
}

// kill closes the connection at once, dropping what is queued.
func (o *outbox) kill() {
	o.close()
	_ = o.c.Close()
}

// stop ends the writer after a failed write: later messages are dropped.
func (o *outbox) stop() {
	o.mu.Lock()
	o.closed = true
	o.queue = nil
	o.mu.Unlock()
}

func (o *outbox) run() {
	defer close(o.done)
	bw := bufio.NewWriter(o.c)
	for {
		o.mu.Lock()
		for len(o.queue) == 0 && !o.closed {
			o.cond.Wait()
		}
		q := o.queue
		o.queue = nil
		closed := o.closed
		o.mu.Unlock()
		for _, m := range q {
			if _, err := bw.Write(m); err != nil {
				o.stop()
				return
			}
		}
		if err := bw.Flush(); err != nil {
			o.stop()
			return
		}
		if closed && len(q) == 0 {
			closeWrite(o.c)
			return
		}
	}
}

// closeWrite ends c's sending side, or closes c where it has no such half-close.
func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
		return
	}
	_ = c.Close()
}
