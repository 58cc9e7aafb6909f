package sim

import (
	"bufio"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/gpuactor/gpuactor/internal/backend"
)

// simComm is one device's rank of a communicator: its connection to the root and what has
// come back over it. The actor thread makes the calls; the connection's reader, the streams'
// goroutines and a split's goroutine meet under mu.
type simComm struct {
	h    backend.Comm
	dev  *device
	addr string // the root's

	mu          sync.Mutex
	cond        sync.Cond
	nranks      int // known at once for InitRank, once the split is done for a split's comm
	rank        int
	out         *outbox // nil until connected
	ready       bool    // every rank joined
	err         *backend.CollError
	closed      bool // destroyed or aborted here
	finalizing  bool
	outstanding int // launches queued and not finished
	results     map[uint64][]byte
	data        map[p2pKey][]byte
	gone        map[int]bool
	splits      map[uint64]splitPlace

	// The actor thread's alone: the sequence numbers that match operations between ranks.
	collSeq, splitSeq uint64
	sendSeq, recvSeq  map[int]uint64
}

// p2pKey names one point-to-point transfer at its receiver: the sender and the transfer's
// sequence number between the two.
type p2pKey struct {
	src int
	seq uint64
}

// splitPlace is where a split put this rank: no comm, or a token, size and rank.
type splitPlace struct {
	member       bool
	tok          commToken
	nranks, rank int
}

func newSimComm(d *device, addr string, nranks, rank int) *simComm {
	c := &simComm{
		h: backend.Comm(d.b.nextHandle()), dev: d, addr: addr, nranks: nranks, rank: rank,
		results: map[uint64][]byte{}, data: map[p2pKey][]byte{}, gone: map[int]bool{}, splits: map[uint64]splitPlace{},
		sendSeq: map[int]uint64{}, recvSeq: map[int]uint64{},
	}
	c.cond.L = &c.mu
	return c
}

// failLocked records c's first failure and wakes every waiter.
func (c *simComm) failLocked(code int32, detail string) {
	if c.err == nil {
		c.err = &backend.CollError{Code: code, Call: "ncclCommGetAsyncError", Detail: detail}
	}
	c.cond.Broadcast()
}

// failAndLeave fails c here and drops its connection, so the other ranks fail too rather
// than wait for this one.
func (c *simComm) failAndLeave(code int32, detail string) {
	c.mu.Lock()
	c.failLocked(code, detail)
	out := c.out
	c.mu.Unlock()
	if out != nil {
		out.kill()
	}
}

// connect joins c to the root as rank of nranks, in the background: the rank is usable once
// the root says every rank has joined.
func (c *simComm) connect(tok commToken, nranks, rank int) {
	conn, err := net.DialTimeout("tcp", c.addr, 10*time.Second)
	c.mu.Lock()
	if err != nil {
		c.failLocked(backend.CollSystemError, fmt.Sprintf("cannot reach the communicator's rendezvous root at %s: %v", c.addr, err))
		c.mu.Unlock()
		return
	}
	if c.closed || c.err != nil {
		c.mu.Unlock()
		_ = conn.Close()
		return
	}
	c.nranks, c.rank = nranks, rank
	c.out = newOutbox(conn)
	w := newMsg(msgHello)
	w.token(tok)
	w.u32(uint32(nranks))
	w.u32(uint32(rank))
	c.out.put(w)
	c.mu.Unlock()
	c.read(conn)
}

// read takes the root's messages until the connection ends, then closes it.
func (c *simComm) read(conn net.Conn) {
	defer conn.Close()
	br := bufio.NewReader(conn)
	for {
		typ, m, err := readMsg(br, maxFrame)
		c.mu.Lock()
		if err != nil {
			if !c.closed {
				c.failLocked(backend.CollSystemError, fmt.Sprintf("lost the connection to the rendezvous root at %s: %v", c.addr, err))
			}
			c.mu.Unlock()
			return
		}
		switch typ {
		case msgReady:
			c.ready = true
		case msgResult:
			seq := m.u64()
			c.results[seq] = m.bytes()
		case msgData:
			src, seq := int(m.u32()), m.u64()
			_, _ = m.u64(), m.u8() // count and type: the receiver checks the size
			c.data[p2pKey{src, seq}] = m.bytes()
		case msgGone:
			c.gone[int(m.u32())] = true
		case msgSplitDone:
			seq := m.u64()
			p := splitPlace{member: m.u8() == 1}
			if p.member {
				p.tok = m.token()
				p.nranks, p.rank = int(m.u32()), int(m.u32())
			}
			c.splits[seq] = p
		case msgFail:
			code := m.i32()
			c.failLocked(code, m.str())
		default:
			c.failLocked(backend.CollInternalError, fmt.Sprintf("the root sent message type %d", typ))
		}
		if m.bad {
			c.failLocked(backend.CollInternalError, fmt.Sprintf("malformed message type %d from the root", typ))
		}
		c.cond.Broadcast()
		c.mu.Unlock()
	}
}

// errAborted is what a rank's own pending operations end with once it aborts or is destroyed.
func errAborted() *backend.CollError {
	return &backend.CollError{Code: backend.CollInvalidUsage, Call: "ncclCommAbort", Detail: "the communicator was aborted or destroyed on this rank"}
}

// waitLocked waits until have reports true, c fails, c is closed here, or the device faults
// (which fails c and drops its connection). It returns with c.mu held.
func (c *simComm) waitLocked(have func() bool) *backend.CollError {
	for {
		switch {
		case c.err != nil:
			return c.err
		case c.closed:
			return errAborted()
		case have():
			return nil
		}
		if f := c.dev.fault.Load(); f != nil {
			c.failLocked(backend.CollUnhandledCudaError, f.err("ncclCommGetAsyncError").Error())
			if c.out != nil {
				c.out.kill()
			}
			continue
		}
		// A device fault signals nobody: look again now and then.
		t := time.AfterFunc(50*time.Millisecond, func() {
			c.mu.Lock()
			c.cond.Broadcast()
			c.mu.Unlock()
		})
		c.cond.Wait()
		t.Stop()
	}
}

// post queues a message to the root; it is dropped once c is closed.
func (c *simComm) post(w *wbuf) {
	c.mu.Lock()
	out := c.out
	c.mu.Unlock()
	if out != nil {
		out.put(w)
	}
}
