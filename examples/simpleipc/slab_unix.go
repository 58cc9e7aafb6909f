//go:build unix

package main

import (
	"os"
	"syscall"
)

// mapSlab maps the slab's file shared, so every process sees the others' writes.
func mapSlab(f *os.File) (slab, error) {
	b, err := syscall.Mmap(int(f.Fd()), 0, shmSize, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	return slab(b), err
}

func unmapSlab(s slab) { _ = syscall.Munmap(s) }
