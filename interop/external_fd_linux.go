//go:build linux

package interop

import (
	"fmt"
	"syscall"
)

// dupFD duplicates fd, close-on-exec, for the runtime to own: the caller keeps fd whatever
// happens. A closed or invalid fd is an ErrInvalidArgument error.
func dupFD(what string, fd int) (int, error) {
	if fd < 0 {
		return -1, invalidFD(what, fd, "negative")
	}
	r, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_DUPFD_CLOEXEC, 0)
	if errno != 0 {
		return -1, invalidFD(what, fd, errno.Error())
	}
	return int(r), nil
}

// closeFD closes a duplicate the runtime did not take.
func closeFD(fd int) { _ = syscall.Close(fd) }

func invalidFD(what string, fd int, why string) error {
	return fmt.Errorf("%w: %s: file descriptor %d: %s", errInvalid, what, fd, why)
}
