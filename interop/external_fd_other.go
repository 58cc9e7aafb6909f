//go:build !linux

package interop

import (
	"fmt"
)

// dupFD refuses: the runtime imports POSIX file descriptors on Linux only.
func dupFD(what string, fd int) (int, error) {
	return -1, fmt.Errorf("%w: %s of file descriptor %d: POSIX file descriptors are imported on Linux only", ErrExternalNotSupported, what, fd)
}

func closeFD(int) {}
