//go:build linux && (amd64 || arm64)

package shmring

import (
	"fmt"
	"os"
	"syscall"
	"unsafe"
)

// memfd_create flags and file seals (linux/memfd.h, linux/fcntl.h), which the syscall package
// does not name on every architecture.
const (
	mfdCloexec      = 0x1
	mfdAllowSealing = 0x2
	fAddSeals       = 1033
	fGetSeals       = 1034
	fSealSeal       = 0x1
	fSealShrink     = 0x2
	fSealGrow       = 0x4
	fDupfdCloexec   = 1030
)

// Memfd makes an anonymous shared-memory file of n bytes, sealed against resizing so the
// peer can neither shrink it under our mapping (our next access would be SIGBUS) nor grow it.
// It is close-on-exec: a child gets it only where it is passed on purpose (exec.Cmd.ExtraFiles,
// a Unix socket).
// Besides the rings, the memory a worker shares with its parent is made with it.
func Memfd(name string, n int64) (*os.File, error) {
	p, err := syscall.BytePtrFromString(name)
	if err != nil {
		return nil, err
	}
	fd, _, errno := syscall.Syscall(sysMemfdCreate, uintptr(unsafe.Pointer(p)), mfdCloexec|mfdAllowSealing, 0)
	if errno != 0 {
		return nil, fmt.Errorf("shmring: memfd_create: %w", errno)
	}
	f := os.NewFile(fd, name)
	if err := syscall.Ftruncate(int(fd), n); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("shmring: ftruncate memfd to %d bytes: %w", n, err)
	}
	if _, _, errno := syscall.Syscall(syscall.SYS_FCNTL, fd, fAddSeals, fSealShrink|fSealGrow|fSealSeal); errno != 0 {
		_ = f.Close()
		return nil, fmt.Errorf("shmring: seal memfd: %w", errno)
	}
	return f, nil
}

// checkSealed reports an error unless fd's size can no longer change, which a ring made by New
// guarantees and the mapping relies on.
func checkSealed(fd uintptr) error {
	seals, _, errno := syscall.Syscall(syscall.SYS_FCNTL, fd, fGetSeals, 0)
	if errno != 0 {
		return fmt.Errorf("%w: reading its seals: %w", ErrNotRing, errno)
	}
	if seals&(fSealShrink|fSealGrow) != fSealShrink|fSealGrow {
		return fmt.Errorf("%w: its size is not sealed (seals %#x)", ErrNotRing, seals)
	}
	return nil
}

// dupFile returns a close-on-exec duplicate of f, which the caller owns.
func dupFile(f *os.File) (*os.File, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	var nfd uintptr
	var errno syscall.Errno
	if err := rc.Control(func(fd uintptr) {
		nfd, _, errno = syscall.Syscall(syscall.SYS_FCNTL, fd, fDupfdCloexec, 0)
	}); err != nil {
		return nil, err
	}
	if errno != 0 {
		return nil, fmt.Errorf("shmring: dup %s: %w", f.Name(), errno)
	}
	return os.NewFile(nfd, f.Name()), nil
}
