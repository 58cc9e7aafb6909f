//go:build !unix

package main

import (
	"errors"
	"fmt"
	"os"
	"runtime"
)

// mapSlab fails: the sample shares its slab through mmap, and CUDA's IPC handles need Linux.
func mapSlab(*os.File) (slab, error) {
	return nil, fmt.Errorf("simpleipc: shared memory between processes is not supported on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

func unmapSlab(slab) {}
