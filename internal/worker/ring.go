package worker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gpuactor/gpuactor/internal/shmring"
)

// DefaultRingSize is the data area of each of the two rings a worker gets unless
// WithRingSize says otherwise: a message of up to about this size crosses in one piece.
const DefaultRingSize = 1 << 20

// ringTransport carries frames through two shared-memory rings, one each way: the fast path.
// A send is a copy into shared memory and a few atomics while the peer keeps up; no system
// call. The ring lets concurrent senders of one process take turns.
type ringTransport struct {
	out, in *shmring.Ring
}

func (t *ringTransport) send(ctx context.Context, b []byte) error {
	err := t.out.Send(ctx, b)
	if errors.Is(err, shmring.ErrTooLarge) {
		return fmt.Errorf("%w: %w", ErrTooLarge, err)
	}
	return err
}

func (t *ringTransport) recv(ctx context.Context, buf []byte) ([]byte, error) {
	return t.in.Recv(ctx, buf[:0])
}

// maxFrame is the smaller ring's largest message, so a frame that fits one way fits back.
func (t *ringTransport) maxFrame() int {
	return min(t.out.Size(), t.in.Size()) - 8 // the ring's record header
}

func (t *ringTransport) close() error {
	return errors.Join(t.out.Close(), t.in.Close())
}

// setSpin sets both rings' spin window.
func (t *ringTransport) setSpin(d time.Duration) {
	t.out.SetSpin(d)
	t.in.SetSpin(d)
}
