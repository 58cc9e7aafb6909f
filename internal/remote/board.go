package remote

import (
	"os"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// The event board. The device actor learns that the GPU passed its work by asking events
// (EventQuery), over and over while work is in flight; a round trip to the worker for each
// would cost microseconds where the runtime answers in a tenth of one, and hold the actor up
// meanwhile. So the worker polls the events itself, between requests (worker.ServeIdle), and
// writes what it finds into memory both processes map: per event, how many of its records it
// has seen complete. The parent counts the records it posted, and answers EventQuery from the
// board when it can:
//   - the board's count has reached the parent's: the event completed (nil);
//   - it has not, and the worker is still polling: not ready, without a call.
//
// It asks the worker instead when the worker has something to say that the board does not
// carry (an error of a posted operation, or an event whose query failed: the attention word),
// when the worker has stopped polling (its poll counter has not moved for boardStale), when
// the event has no slot (more events than boardSlots), and when the worker is gone. A
// dead worker's call fails at once, so the device learns of the death.
//
// Layout: the attention word (uint32) at 0, the poll counter (uint64) at 8, and from
// boardHeader one uint64 per slot: the records of that slot's event seen complete.

const (
	boardSlots  = 8192
	boardHeader = 64
	boardSize   = boardHeader + 8*boardSlots
	// boardStale is how long the poll counter may stand still before the parent stops
	// trusting "not ready" from the board and asks the worker.
	boardStale = 50 * time.Microsecond
)

// Attention bits, set by the worker.
const (
	attendDeferred = 1 << iota // a posted operation's error waits for a call
	attendFault                // an event's query failed: the call will say how
)

func boardWord(mem []byte, off int) *atomic.Uint32 {
	return (*atomic.Uint32)(unsafe.Pointer(&mem[off]))
}
func boardCount(mem []byte, off int) *atomic.Uint64 {
	return (*atomic.Uint64)(unsafe.Pointer(&mem[off]))
}
func boardDone(mem []byte, slot int) *atomic.Uint64 { return boardCount(mem, boardHeader+8*slot) }

// board is the parent's side, used on the device's one goroutine.
type board struct {
	mem   []byte
	slots map[backend.Event]int
	free  []int
	next  int
	recs  [boardSlots]uint64 // records posted, per slot

	polls      uint64    // the worker's poll counter when last seen to move
	pollsMoved time.Time // when that was
}

// notReady is EventQuery's answer from the board, as the runtime's.
var errBoardNotReady = &cudaerr.Error{Op: "cudaEventQuery", Code: cudaerr.NotReady, Message: "device not ready"}

// openBoard makes the board and hands it to the worker; nil (every query a call) when shared
// memory is not to be had.
func (d *Device) openBoard() {
	mem, f, err := newShared(boardSize)
	if err != nil {
		return
	}
	e := request(mBoard)
	e.i64(int64(os.Getpid()))
	e.u64(uint64(f.Fd()))
	e.u64(boardSize)
	_, err = d.do(e)
	_ = f.Close()
	if err != nil {
		_ = unmapShared(mem)
		return
	}
	d.board = &board{mem: mem, slots: map[backend.Event]int{}}
}

// closeBoard unmaps the board once the worker is gone or the backend closed.
func (d *Device) closeBoard() {
	if d.board != nil {
		_ = unmapShared(d.board.mem)
		d.board = nil
	}
}

// take gives a slot for a new event; -1 when all are taken.
func (bd *board) take() int {
	if n := len(bd.free); n > 0 {
		s := bd.free[n-1]
		bd.free = bd.free[:n-1]
		return s
	}
	if bd.next < boardSlots {
		bd.next++
		return bd.next - 1
	}
	return -1
}

// query answers EventQuery for e from the board; ok false when the worker must be asked.
func (bd *board) query(e backend.Event, alive bool) (err error, ok bool) {
	slot, has := bd.slots[e]
	if !has || !alive {
		return nil, false
	}
	done := boardDone(bd.mem, slot).Load() // before attention: see the worker's order
	if boardWord(bd.mem, 0).Load() != 0 {
		return nil, false
	}
	if done >= bd.recs[slot] {
		return nil, true
	}
	now := time.Now()
	if p := boardCount(bd.mem, 8).Load(); p != bd.polls {
		bd.polls, bd.pollsMoved = p, now
	} else if now.Sub(bd.pollsMoved) > boardStale {
		return nil, false // the worker is not polling: ask it, which also wakes it
	}
	return errBoardNotReady, true
}

// serverBoard is the worker's side, used on the serving goroutine.
type serverBoard struct {
	mem      []byte
	slots    map[backend.Event]int
	recorded [boardSlots]uint64    // records run, per slot
	watch    map[backend.Event]int // events with a record not yet seen complete
	polls    uint64
}

func newServerBoard(mem []byte) *serverBoard {
	return &serverBoard{mem: mem, slots: map[backend.Event]int{}, watch: map[backend.Event]int{}}
}

// created registers a new event's slot.
func (sb *serverBoard) created(e backend.Event, slot int) {
	if slot < 0 || slot >= boardSlots {
		return
	}
	sb.slots[e] = slot
	sb.recorded[slot] = 0
	boardDone(sb.mem, slot).Store(0)
}

// recorded notes a record of e that ran.
func (sb *serverBoard) record(e backend.Event) {
	if slot, ok := sb.slots[e]; ok {
		sb.recorded[slot]++
		sb.watch[e] = slot
	}
}

// complete publishes that e's last record completed (a query or synchronize of it succeeded).
func (sb *serverBoard) complete(e backend.Event) {
	if slot, ok := sb.slots[e]; ok {
		boardDone(sb.mem, slot).Store(sb.recorded[slot])
		delete(sb.watch, e)
	}
}

// destroyed forgets e, whose slot the parent reuses once the destroy has answered.
func (sb *serverBoard) destroyed(e backend.Event) {
	if slot, ok := sb.slots[e]; ok {
		boardDone(sb.mem, slot).Store(0)
		delete(sb.slots, e)
		delete(sb.watch, e)
	}
}

// attend sets or clears attention bits.
func (sb *serverBoard) attend(bit uint32, on bool) {
	w := boardWord(sb.mem, 0)
	for {
		old := w.Load()
		v := old &^ bit
		if on {
			v |= bit
		}
		if v == old || w.CompareAndSwap(old, v) {
			return
		}
	}
}

// poll asks the watched events and publishes the ones that completed; it reports whether any
// is still outstanding. The count is stored after any attention bit, so that a parent that
// sees the count also sees the bit.
func (sb *serverBoard) poll(dv backend.Device) bool {
	sb.polls++
	boardCount(sb.mem, 8).Store(sb.polls)
	for e, slot := range sb.watch {
		err := dv.EventQuery(e)
		switch {
		case err == nil:
			boardDone(sb.mem, slot).Store(sb.recorded[slot])
			delete(sb.watch, e)
		case isNotReady(err):
		default:
			sb.attend(attendFault, true) // the parent's call will meet the error itself
			delete(sb.watch, e)
		}
	}
	return len(sb.watch) > 0
}

func isNotReady(err error) bool {
	c, ok := cudaerr.CodeOf(err)
	return ok && c == cudaerr.NotReady
}
