package worker

import (
	"io"
	"strings"
	"sync"
)

// tailKeep is how much of a worker's standard error is kept for error messages.
const tailKeep = 2 << 10

// tailWriter passes a worker's standard error on and keeps its last bytes, for the errors
// that say why a worker died or did not start.
type tailWriter struct {
	w    io.Writer
	mu   sync.Mutex
	tail []byte
}

func (t *tailWriter) Write(b []byte) (int, error) {
	t.mu.Lock()
	t.tail = append(t.tail, b...)
	if len(t.tail) > tailKeep {
		t.tail = append(t.tail[:0], t.tail[len(t.tail)-tailKeep:]...)
	}
	t.mu.Unlock()
	if t.w != nil {
		_, _ = t.w.Write(b) // the worker must not stall on a broken log
	}
	return len(b), nil
}

// String is the kept tail, trimmed.
func (t *tailWriter) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.tail))
}
