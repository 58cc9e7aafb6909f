package remote

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

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
	sb.record(5)
	sb.record(5)
	assert.Equal(t, uint64(2), sb.recorded[1])
	sb.destroyed(5)
	assert.Empty(t, sb.watch)
	sb.created(6, boardSlots) // out of range: not on the board
	sb.record(6)
	assert.Empty(t, sb.watch)
}
