package sim

import (
	"bufio"
	"cmp"
	"fmt"
	"net"
	"slices"
	"sync"

	"github.com/gpuactor/gpuactor/internal/backend"
)

// The rendezvous root: one per process, started by the first CollUniqueID and closed when no
// communicator it serves is left. It listens on loopback; every rank of a communicator whose
// id it made connects to it, and it matches their operations: collectives by their sequence
// number in the communicator, point-to-point data by (source, destination, sequence between
// the two), splits by their sequence number. The process-wide root is the one piece of global
// state the simulator keeps: a CommID names a process, not a Backend.
var theRoot struct {
	mu sync.Mutex
	r  *root
}

// root is a listener and the communicators it serves. One mutex guards it all: the root
// models function, not speed.
type root struct {
	ln    net.Listener
	addr  string
	mu    sync.Mutex
	comms map[commToken]*rootComm
	shut  bool
}

// rootComm is one communicator at the root.
type rootComm struct {
	tok    commToken
	nranks int // 0 until the first rank says
	ranks  []*rootRank
	joined int
	active int // joined ranks still connected
	failed *backend.CollError
	colls  map[uint64]*pendingColl
	splits map[uint64]*pendingSplit
}

// rootRank is one joined rank's connection.
type rootRank struct {
	out  *outbox
	gone bool // left (bye) or dropped
}

// pendingColl gathers one collective's contributions.
type pendingColl struct {
	hdr   collHeader
	first int // the rank whose header the others must match
	parts [][]byte
	n     int
}

// pendingSplit gathers one split's colors and keys.
type pendingSplit struct {
	color, key []int
	n          int
}

// collHeader is what every rank of one collective must agree on.
type collHeader struct {
	kind  backend.CollOpKind
	dtype backend.CollDataType
	op    backend.CollRedOp
	root  int32
	count uint64
}

// newCommID registers a fresh communicator at this process's root, starting the root if
// there is none (or the last one has closed), and returns its id. Locks are taken in the
// order theRoot.mu, then root.mu.
func newCommID() (backend.CommID, error) {
	tok, err := newToken()
	if err != nil {
		return backend.CommID{}, err
	}
	theRoot.mu.Lock()
	defer theRoot.mu.Unlock()
	if r := theRoot.r; r != nil {
		r.mu.Lock()
		defer r.mu.Unlock()
		if !r.shut {
			return r.registerLocked(tok)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return backend.CommID{}, fmt.Errorf("rendezvous root: %w", err)
	}
	r := &root{ln: ln, addr: ln.Addr().String(), comms: map[commToken]*rootComm{}}
	theRoot.r = r
	go r.accept()
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.registerLocked(tok)
}

// registerLocked adds a communicator named tok and returns its id.
func (r *root) registerLocked(tok commToken) (backend.CommID, error) {
	id, err := encodeID(tok, r.addr)
	if err != nil {
		return id, err
	}
	r.comms[tok] = &rootComm{tok: tok, colls: map[uint64]*pendingColl{}, splits: map[uint64]*pendingSplit{}}
	return id, nil
}

func (r *root) accept() {
	for {
		c, err := r.ln.Accept()
		if err != nil {
			return
		}
		r.mu.Lock()
		if r.shut {
			r.mu.Unlock()
			_ = c.Close()
			return
		}
		r.mu.Unlock()
		go r.serve(c)
	}
}

// serve reads one rank's connection: its hello, then its operations, until it leaves.
func (r *root) serve(c net.Conn) {
	out := newOutbox(c)
	br := bufio.NewReader(c)
	var cm *rootComm
	rank := -1
	clean := false
	defer func() {
		out.close()
		r.mu.Lock()
		if cm != nil && rank >= 0 {
			r.leaveLocked(cm, rank, clean)
		}
		r.mu.Unlock()
		<-out.done // the rank's last messages are written before the connection closes
		_ = c.Close()
	}()
	for {
		limit := uint64(maxFrame)
		if cm == nil {
			limit = maxHello
		}
		typ, m, err := readMsg(br, limit)
		if err != nil {
			return
		}
		r.mu.Lock()
		switch {
		case typ == msgHello && cm == nil:
			cm, rank = r.helloLocked(m, out)
			if cm == nil {
				r.mu.Unlock()
				return
			}
		case cm == nil:
			r.mu.Unlock()
			return // talks before saying hello: not one of ours
		case typ == msgColl:
			r.collLocked(cm, rank, m)
		case typ == msgSend:
			r.sendLocked(cm, rank, m)
		case typ == msgSplit:
			r.splitLocked(cm, rank, m)
		case typ == msgBye:
			clean = true
			r.mu.Unlock()
			return
		default:
			r.failLocked(cm, backend.CollInternalError, fmt.Sprintf("rank %d sent message type %d the root does not know", rank, typ))
		}
		r.mu.Unlock()
	}
}

// helloLocked joins a rank, or refuses it with a fail message.
func (r *root) helloLocked(m *rbuf, out *outbox) (*rootComm, int) {
	tok := m.token()
	nranks, rank := int(m.u32()), int(m.u32())
	refuse := func(code int32, format string, args ...any) (*rootComm, int) {
		w := newMsg(msgFail)
		w.i32(code)
		w.str(fmt.Sprintf(format, args...))
		out.put(w)
		return nil, -1
	}
	cm := r.comms[tok]
	switch {
	case m.bad:
		return refuse(backend.CollInternalError, "malformed hello")
	case cm == nil:
		return refuse(backend.CollInvalidArgument, "the id names no communicator of its root (it was never made there, or every rank of it has left)")
	case cm.failed != nil:
		return refuse(cm.failed.Code, "%s", cm.failed.Detail)
	case cm.nranks != 0 && nranks != cm.nranks:
		return refuse(backend.CollInvalidUsage, "rank %d joined with nranks %d, earlier ranks with %d", rank, nranks, cm.nranks)
	case rank < 0 || rank >= nranks:
		return refuse(backend.CollInvalidArgument, "rank %d out of range for %d ranks", rank, nranks)
	}
	if cm.nranks == 0 {
		cm.nranks = nranks
		cm.ranks = make([]*rootRank, nranks)
	}
	if cm.ranks[rank] != nil {
		return refuse(backend.CollInvalidUsage, "rank %d joined the communicator twice", rank)
	}
	cm.ranks[rank] = &rootRank{out: out}
	cm.joined++
	cm.active++
	if cm.joined == cm.nranks {
		for _, rr := range cm.ranks {
			rr.out.put(newMsg(msgReady))
		}
	}
	return cm, rank
}

// failLocked fails cm for every rank still connected: each gets a fail message, and nothing
// of cm completes any more.
func (r *root) failLocked(cm *rootComm, code int32, detail string) {
	if cm.failed != nil {
		return
	}
	cm.failed = &backend.CollError{Code: code, Call: "ncclCommGetAsyncError", Detail: detail}
	for _, rr := range cm.ranks {
		if rr != nil && !rr.gone {
			w := newMsg(msgFail)
			w.i32(code)
			w.str(detail)
			rr.out.put(w)
		}
	}
	cm.colls, cm.splits = nil, nil
}

// leaveLocked records that rank left cm: cleanly (after its bye) or by a dropped connection,
// which fails the communicator for the others, since what they wait on from it may never come.
func (r *root) leaveLocked(cm *rootComm, rank int, clean bool) {
	rr := cm.ranks[rank]
	rr.gone = true
	cm.active--
	if !clean {
		r.failLocked(cm, backend.CollRemoteError, fmt.Sprintf("rank %d's connection dropped (it aborted, or its process died)", rank))
	} else if cm.failed == nil {
		// Its data sent so far is delivered; the others learn it sends no more.
		for _, o := range cm.ranks {
			if o != nil && !o.gone {
				w := newMsg(msgGone)
				w.u32(uint32(rank))
				o.out.put(w)
			}
		}
		for seq, pc := range cm.colls {
			if pc.parts[rank] == nil {
				r.failLocked(cm, backend.CollRemoteError, fmt.Sprintf("rank %d left the communicator before joining collective %d", rank, seq))
				break
			}
		}
		for seq, ps := range cm.splits {
			if ps.color[rank] == unset {
				r.failLocked(cm, backend.CollRemoteError, fmt.Sprintf("rank %d left the communicator before joining split %d", rank, seq))
				break
			}
		}
	}
	if cm.active == 0 && (cm.joined == cm.nranks || cm.failed != nil) {
		delete(r.comms, cm.tok)
		r.closeIfIdleLocked()
	}
}

// closeIfIdleLocked closes the root once it serves no communicator: the next CollUniqueID
// starts a new one.
func (r *root) closeIfIdleLocked() {
	if len(r.comms) > 0 || r.shut {
		return
	}
	r.shut = true
	_ = r.ln.Close()
}

// anyGoneLocked is the first rank of cm that left, or -1.
func anyGoneLocked(cm *rootComm) int {
	for i, rr := range cm.ranks {
		if rr == nil || rr.gone {
			return i
		}
	}
	return -1
}

// collLocked takes one rank's contribution to a collective and, once every rank's is in,
// sends every rank its result.
func (r *root) collLocked(cm *rootComm, rank int, m *rbuf) {
	seq := m.u64()
	h := collHeader{kind: backend.CollOpKind(m.u8()), dtype: backend.CollDataType(m.u8()), op: backend.CollRedOp(m.u8()), root: m.i32(), count: m.u64()}
	data := m.bytes()
	if cm.failed != nil {
		return
	}
	if m.bad {
		r.failLocked(cm, backend.CollInternalError, fmt.Sprintf("malformed collective from rank %d", rank))
		return
	}
	if g := anyGoneLocked(cm); g >= 0 {
		r.failLocked(cm, backend.CollRemoteError, fmt.Sprintf("rank %d called collective %d after rank %d left the communicator", rank, seq, g))
		return
	}
	pc := cm.colls[seq]
	if pc == nil {
		pc = &pendingColl{hdr: h, first: rank, parts: make([][]byte, cm.nranks)}
		cm.colls[seq] = pc
	} else if pc.hdr != h {
		r.failLocked(cm, backend.CollInvalidUsage, fmt.Sprintf("collective %d differs between ranks: rank %d called %s, rank %d called %s",
			seq, pc.first, pc.hdr.describe(), rank, h.describe()))
		return
	}
	if data == nil {
		data = []byte{}
	}
	pc.parts[rank] = data
	pc.n++
	if pc.n < cm.nranks {
		return
	}
	delete(cm.colls, seq)
	results, err := collResults(pc.hdr, pc.parts)
	if err != "" {
		r.failLocked(cm, backend.CollInvalidArgument, fmt.Sprintf("collective %d: %s", seq, err))
		return
	}
	for i, rr := range cm.ranks {
		w := newMsg(msgResult)
		w.u64(seq)
		w.bytes(results[i])
		rr.out.put(w)
	}
}

// describe names a collective for a mismatch message.
func (h collHeader) describe() string {
	return fmt.Sprintf("%s(count %d, type %d, op %d, root %d)", collCall(h.kind), h.count, h.dtype, h.op, h.root)
}

// sendLocked forwards point-to-point data to its destination.
func (r *root) sendLocked(cm *rootComm, rank int, m *rbuf) {
	dst := int(m.u32())
	pairSeq := m.u64()
	count := m.u64()
	dtype := m.u8()
	data := m.bytes()
	if cm.failed != nil {
		return
	}
	if m.bad || dst < 0 || dst >= cm.nranks {
		r.failLocked(cm, backend.CollInternalError, fmt.Sprintf("malformed send from rank %d", rank))
		return
	}
	to := cm.ranks[dst]
	if to.gone {
		r.failLocked(cm, backend.CollRemoteError, fmt.Sprintf("rank %d sent to rank %d, which left the communicator", rank, dst))
		return
	}
	w := newMsg(msgData)
	w.u32(uint32(rank))
	w.u64(pairSeq)
	w.u64(count)
	w.u8(dtype)
	w.bytes(data)
	to.out.put(w)
}

// unset marks a rank that has not yet joined a split.
const unset = -2

// splitLocked takes one rank's color and key and, once every rank's is in, makes the new
// communicators and tells each rank its place.
func (r *root) splitLocked(cm *rootComm, rank int, m *rbuf) {
	seq := m.u64()
	color, key := int(m.i32()), int(m.i32())
	if cm.failed != nil {
		return
	}
	if g := anyGoneLocked(cm); g >= 0 {
		r.failLocked(cm, backend.CollRemoteError, fmt.Sprintf("rank %d split the communicator after rank %d left it", rank, g))
		return
	}
	ps := cm.splits[seq]
	if ps == nil {
		ps = &pendingSplit{color: make([]int, cm.nranks), key: make([]int, cm.nranks)}
		for i := range ps.color {
			ps.color[i] = unset
		}
		cm.splits[seq] = ps
	}
	ps.color[rank], ps.key[rank] = color, key
	ps.n++
	if ps.n < cm.nranks {
		return
	}
	delete(cm.splits, seq)
	groups := map[int][]int{}
	for i, c := range ps.color {
		if c != backend.SplitNoColor {
			groups[c] = append(groups[c], i)
		}
	}
	type place struct {
		tok          commToken
		nranks, rank int
	}
	places := make([]*place, cm.nranks)
	for _, members := range groups {
		slices.SortStableFunc(members, func(a, b int) int {
			return cmp.Or(cmp.Compare(ps.key[a], ps.key[b]), cmp.Compare(a, b))
		})
		tok, err := newToken()
		if err != nil {
			r.failLocked(cm, backend.CollSystemError, "split: "+err.Error())
			return
		}
		r.comms[tok] = &rootComm{tok: tok, colls: map[uint64]*pendingColl{}, splits: map[uint64]*pendingSplit{}}
		for newRank, old := range members {
			places[old] = &place{tok: tok, nranks: len(members), rank: newRank}
		}
	}
	for i, rr := range cm.ranks {
		w := newMsg(msgSplitDone)
		w.u64(seq)
		if p := places[i]; p != nil {
			w.u8(1)
			w.token(p.tok)
			w.u32(uint32(p.nranks))
			w.u32(uint32(p.rank))
		} else {
			w.u8(0)
		}
		rr.out.put(w)
	}
}
