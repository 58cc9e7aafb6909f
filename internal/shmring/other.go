//go:build !(linux && (amd64 || arm64))

package shmring

import (
	"context"
	"os"
	"time"
)

// DefaultSpin is how long a waiting Send or Recv would poll before sleeping.
const DefaultSpin = 50 * time.Microsecond

// MinSize and MaxSize bound a ring's data area.
const (
	MinSize = 4 << 10
	MaxSize = 1 << 30
)

// Ring is one direction of a channel in shared memory. On this OS and architecture there are
// none: New and Open return ErrUnsupported, so no Ring value is ever usable.
type Ring struct{}

// New returns ErrUnsupported: shared-memory rings are implemented on Linux (amd64, arm64) only.
func New(size int) (*Ring, error) { return nil, ErrUnsupported }

// Open returns ErrUnsupported: shared-memory rings are implemented on Linux (amd64, arm64) only.
func Open(f *os.File) (*Ring, error) { return nil, ErrUnsupported }

// File returns nil: there is no ring on this OS.
func (r *Ring) File() *os.File { return nil }

// Size returns 0: there is no ring on this OS.
func (r *Ring) Size() int { return 0 }

// SetSpin does nothing: there is no ring on this OS.
func (r *Ring) SetSpin(time.Duration) {}

// SetYield does nothing where rings are not supported.
func (r *Ring) SetYield(bool) {}

// SetIdle does nothing where rings are not supported.
func (r *Ring) SetIdle(func() bool) {}

// Send returns ErrUnsupported.
func (r *Ring) Send(ctx context.Context, msg []byte) error { return ErrUnsupported }

// Recv returns ErrUnsupported.
func (r *Ring) Recv(ctx context.Context, buf []byte) ([]byte, error) { return buf[:0], ErrUnsupported }

// Close does nothing and returns nil.
func (r *Ring) Close() error { return nil }
