package device

import (
	"fmt"

	"github.com/gpuactor/gpuactor/internal/backend"
)

// Kernel is the kernel the spec launches.
func (s LaunchSpec) Kernel() *Kernel { return s.k }

// Config is the spec's launch shape.
func (s LaunchSpec) Config() Config { return s.cfg }

// Node is the checked launch as a graph kernel node's parameters, for the graphs package; on
// the actor thread, where it refuses an unloaded module and buffers freed since PrepareLaunch.
func (s LaunchSpec) Node() (backend.KernelNode, error) {
	k := s.k
	if k.mod.unloaded.Load() {
		return backend.KernelNode{}, fmt.Errorf("%w: kernel %s: module %s was unloaded", ErrFreed, k.name, k.mod.name)
	}
	for _, b := range s.bufs {
		if b.freed.Load() {
			return backend.KernelNode{}, fmt.Errorf("%w: kernel %s: argument buffer %#x used after Free", ErrFreed, k.name, uint64(b.ptr))
		}
	}
	return backend.KernelNode{Kernel: k.h, Grid: s.cfg.Grid, Block: s.cfg.Block, SharedMem: s.cfg.SharedMem, Args: s.args}, nil
}
