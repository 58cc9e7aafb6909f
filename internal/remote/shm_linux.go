//go:build linux && (amd64 || arm64)

package remote

import (
	"fmt"
	"os"
	"syscall"

	"github.com/gpuactor/gpuactor/internal/shmring"
)

// newShared makes size bytes of anonymous shared memory (a memfd, sealed against resizing so
// neither side's mapping can lose pages under it) and maps it. The caller closes the file once
// the worker mapped it too.
func newShared(size uint64) ([]byte, *os.File, error) {
	if size > uint64(maxInt) {
		return nil, nil, fmt.Errorf("%d bytes do not fit the address space", size)
	}
	f, err := shmring.Memfd("gpuactor-host", int64(size))
	if err != nil {
		return nil, nil, err
	}
	mem, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
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
