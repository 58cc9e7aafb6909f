package shmring

import "errors"

var (
	// ErrTooLarge is returned by Send, at once, for a message that could never fit in the ring
	// even when it is empty (its length plus an 8-byte record header, rounded up to 8 bytes,
	// exceeds the data area).
	ErrTooLarge = errors.New("shmring: message larger than the ring")

	// ErrClosed is returned by Send and Recv once either side has closed the ring (Recv first
	// returns the messages still in it), and by any call on a Ring after its own Close.
	ErrClosed = errors.New("shmring: ring closed")

	// ErrCorrupt is returned by Recv when the ring's counters or a record header are
	// inconsistent, which only a misbehaving peer (or two processes sending on one ring)
	// causes. The ring cannot be read past that point; close it.
	ErrCorrupt = errors.New("shmring: ring corrupt")

	// ErrNotRing is returned by Open for a file that is not a ring made by New.
	ErrNotRing = errors.New("shmring: not a shared-memory ring")

	// ErrUnsupported is returned by New and Open where shared-memory rings are not implemented
	// (anything but Linux on amd64 or arm64). It matches errors.ErrUnsupported.
	ErrUnsupported = unsupported{}
)

type unsupported struct{}

func (unsupported) Error() string {
	return "shmring: shared-memory rings are not supported on this OS and architecture (Linux on amd64 or arm64 only)"
}

func (unsupported) Is(target error) bool { return target == errors.ErrUnsupported }
