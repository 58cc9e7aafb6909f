//go:build linux && (amd64 || arm64)

package remote

import (
	"fmt"
	"os"
	"syscall"
	"unsafe"
)

// memfd_create and file-seal constants (linux/memfd.h, linux/fcntl.h).
const (
	mfdCloexec      = 0x1
	mfdAllowSealing = 0x2
	fAddSeals       = 1033
	fSealSeal       = 0x1
	fSealShrink     = 0x2
	fSealGrow       = 0x4
)

// newShared makes size bytes of anonymous shared memory (a memfd, sealed against resizing so
// neither side's mapping can lose pages under it) and maps it. The caller closes the file once
// the worker mapped it too.
func newShared(size uint64) ([]byte, *os.File, error) {
	if size > uint64(maxInt) {
		return nil, nil, fmt.Errorf("%d bytes do not fit the address space", size)
	}
	name := []byte("gpuactor-host\x00")
	fd, _, errno := syscall.Syscall(sysMemfdCreate, uintptr(unsafe.Pointer(&name[0])), mfdCloexec|mfdAllowSealing, 0)
	if errno != 0 {
		return nil, nil, fmt.Errorf("memfd_create: %w", errno)
	}
	f := os.NewFile(fd, "gpuactor-host")
	if err := syscall.Ftruncate(int(fd), int64(size)); err != nil {
		_ = f.Close()
		return nil, nil, fmt.Errorf("sizing the memfd to %d bytes: %w", size, err)
	}
	if _, _, errno := syscall.Syscall(syscall.SYS_FCNTL, fd, fAddSeals, fSealShrink|fSealGrow|fSealSeal); errno != 0 {
		_ = f.Close()
		return nil, nil, fmt.Errorf("sealing the memfd: %w", errno)
	}
	mem, err := syscall.Mmap(int(fd), 0, int(size), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		_ = f.Close()
		return nil, nil, fmt.Errorf("mapping %d bytes: %w", size, err)
	}
	return mem, f, nil
}

// mapPeer maps, in the worker, size bytes of the parent's memfd fd, opened through /proc:
// the parent keeps the descriptor open until the worker answers.
func mapPeer(pid int, fd uint64, size uint64) ([]byte, error) {
	if size > uint64(maxInt) {
		return nil, fmt.Errorf("%d bytes do not fit the address space", size)
	}
	f, err := os.OpenFile(fmt.Sprintf("/proc/%d/fd/%d", pid, fd), os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("opening the parent's shared memory: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("the parent's shared memory: %w", err)
	}
	if uint64(st.Size()) < size {
		return nil, fmt.Errorf("the parent's shared memory holds %d bytes, not %d", st.Size(), size)
	}
	mem, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("mapping the parent's %d bytes: %w", size, err)
	}
	return mem, nil
}

func unmapShared(mem []byte) error { return syscall.Munmap(mem) }

const maxInt = int(^uint(0) >> 1)
