package worker

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
)

// transport carries frames between the parent and the worker: over the control socket, or
// (the fast path) over a pair of shared-memory rings. Each side holds one.
type transport interface {
	// send writes one encoded frame; safe for concurrent use. It blocks only while the peer
	// is not reading, until close.
	send(ctx context.Context, b []byte) error
	// recv reads one frame into buf, which holds maxFrame bytes or more, and returns it; one
	// reader at a time. It fails once the peer is gone or close was called.
	recv(ctx context.Context, buf []byte) ([]byte, error)
	// maxFrame is the largest frame, header included, the transport carries.
	maxFrame() int
	close() error
}

// socketMaxFrame is the largest frame over the control socket: a SOCK_SEQPACKET message must
// fit the socket's send buffer whole, and the default buffer (net.core.wmem_default, about
// 208 KiB) holds this with room for the kernel's overhead.
const socketMaxFrame = 64 << 10

// socketTransport carries frames as SOCK_SEQPACKET messages, one message a frame: the kernel
// keeps the boundaries and a write is atomic, so concurrent senders need no lock.
type socketTransport struct {
	c         *net.UnixConn
	closeOnce sync.Once
	closeErr  error
}

func (t *socketTransport) send(_ context.Context, b []byte) error {
	if len(b) > socketMaxFrame {
		return fmt.Errorf("%w: a %d-byte frame over the control socket (at most %d)", ErrTooLarge, len(b), socketMaxFrame)
	}
	_, err := t.c.Write(b)
	return err
}

func (t *socketTransport) recv(_ context.Context, buf []byte) ([]byte, error) {
	// One byte more than the largest frame tells a truncated (oversized) message apart.
	if len(buf) < socketMaxFrame+1 {
		return nil, errors.New("worker: receive buffer too small")
	}
	n, err := t.c.Read(buf[:socketMaxFrame+1])
	if err != nil {
		return nil, err
	}
	if n == 0 {
		// A SOCK_SEQPACKET socket reads 0 bytes only when the peer shut down or closed.
		return nil, errPeerClosed
	}
	if n > socketMaxFrame {
		return nil, fmt.Errorf("%w: the peer sent a frame over %d bytes", ErrTooLarge, socketMaxFrame)
	}
	return buf[:n], nil
}

func (t *socketTransport) maxFrame() int { return socketMaxFrame }

func (t *socketTransport) close() error {
	t.closeOnce.Do(func() { t.closeErr = t.c.Close() })
	return t.closeErr
}

// errPeerClosed is a transport's error once the other side closed its end.
var errPeerClosed = errors.New("worker: the peer closed the connection")
