package remote

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// The parent's reading of the board: done once the worker's count reaches its own; not ready
// while the worker polls; a call (ok false) when the worker stopped polling, raised attention,
// died, or the event has no slot.
func TestBoardQuery(t *testing.T) {
	mem := make([]byte, boardSize)
	bd := &board{mem: mem, slots: map[backend.Event]int{7: 3}}
	bd.recs[3] = 2
	boardDone(mem, 3).Store(1)

	_, ok := bd.query(8, true)
	assert.False(t, ok, "an event without a slot")
	_, ok = bd.query(7, false)
	assert.False(t, ok, "a dead worker")

	boardCount(mem, 8).Store(1)
	err, ok := bd.query(7, true)
	assert.True(t, ok)
	assert.Same(t, errBoardNotReady, err, "the worker polls: not ready from the board")
	time.Sleep(2 * boardStale)
	_, ok = bd.query(7, true)
	assert.False(t, ok, "the poll counter stood still: ask")
	boardCount(mem, 8).Store(2)
	_, ok = bd.query(7, true)
	assert.True(t, ok, "it moved again")

	boardDone(mem, 3).Store(2)
	err, ok = bd.query(7, true)
	assert.True(t, ok)
	assert.NoError(t, err, "done")

	boardWord(mem, 0).Store(attendDeferred)
	_, ok = bd.query(7, true)
	assert.False(t, ok, "the worker has an error to tell")
}

// The worker's side sets and clears attention bits independently.
func TestBoardAttention(t *testing.T) {
	sb := newServerBoard(make([]byte, boardSize))
	sb.attend(attendDeferred, true)
	sb.attend(attendFault, true)
	sb.attend(attendDeferred, false)
	assert.Equal(t, uint32(attendFault), boardWord(sb.mem, 0).Load())
	sb.created(5, 1)
	sb.record(5, 0x10)
	sb.record(5, 0x10)
	assert.Equal(t, uint64(2), sb.recorded[1])
	sb.destroyed(5)
	assert.Empty(t, sb.watch)
	sb.created(6, boardSlots) // out of range: not on the board
	sb.record(6, 0x10)
	assert.Empty(t, sb.watch)
}

// queryDevice answers EventQuery from done (an event not in it is not ready) and counts the
// queries.
type queryDevice struct {
	backend.Device
	done    map[backend.Event]bool
	queries int
}

func (d *queryDevice) EventQuery(e backend.Event) error {
	d.queries++
	if d.done[e] {
		return nil
	}
	return &cudaerr.Error{Code: cudaerr.NotReady, Op: "cudaEventQuery"}
}

// The worker's poll asks each stream's oldest watched record, not every watched event, and
// publishes a stream's records in order up to the first not done; an event recorded again
// elsewhere, completed by a call, or destroyed is skipped where it was.
func TestServerBoardPollsEachStreamInOrder(t *testing.T) {
	sb := newServerBoard(make([]byte, boardSize))
	dv := &queryDevice{done: map[backend.Event]bool{}}
	const streams, perStream = 8, 16
	ev := func(s, i int) backend.Event { return backend.Event(100*s + i + 1) }
	slot := func(s, i int) int { return s*perStream + i }
	for s := range streams {
		for i := range perStream {
			sb.created(ev(s, i), slot(s, i))
			sb.record(ev(s, i), backend.Stream(s+1))
		}
	}
	assert.True(t, sb.poll(dv))
	assert.Equal(t, streams, dv.queries, "one query a stream, not one an event")

	// Stream 1's first five are done: five published, the sixth asked and not done.
	for i := range 5 {
		dv.done[ev(0, i)] = true
	}
	dv.queries = 0
	sb.poll(dv)
	for i := range perStream {
		want := uint64(0)
		if i < 5 {
			want = 1
		}
		assert.Equal(t, want, boardDone(sb.mem, slot(0, i)).Load(), "stream 1 record %d", i)
	}
	assert.Equal(t, streams+5, dv.queries)

	// Stream 2's head recorded again on stream 3, its second completed by a call, its third
	// destroyed: its fourth is the one asked.
	sb.record(ev(1, 0), 3)
	sb.complete(ev(1, 1))
	sb.destroyed(ev(1, 2))
	dv.done[ev(1, 3)] = true
	sb.poll(dv)
	assert.Equal(t, uint64(1), boardDone(sb.mem, slot(1, 3)).Load())
	assert.Equal(t, uint64(0), boardDone(sb.mem, slot(1, 0)).Load(), "its latest record, on stream 3, is not done")
	assert.Equal(t, uint64(1), boardDone(sb.mem, slot(1, 1)).Load(), "the call published it")

	// Everything done: nothing left to watch, and no stream left.
	for s := range streams {
		for i := range perStream {
			dv.done[ev(s, i)] = true
		}
	}
	assert.False(t, sb.poll(dv))
	assert.Empty(t, sb.streams)
	assert.Equal(t, uint64(2), boardDone(sb.mem, slot(1, 0)).Load(), "both its records")

	// An event whose query fails raises attention and is watched no more.
	sb.created(ev(9, 0), 200)
	sb.record(ev(9, 0), 1)
	dv.done = map[backend.Event]bool{}
	fault := &faultDevice{}
	assert.False(t, sb.poll(fault))
	assert.Equal(t, uint32(attendFault), boardWord(sb.mem, 0).Load()&attendFault)
}

// faultDevice fails every EventQuery with an illegal address.
type faultDevice struct{ backend.Device }

func (faultDevice) EventQuery(backend.Event) error {
	return &cudaerr.Error{Code: cudaerr.IllegalAddress, Op: "cudaEventQuery"}
}
