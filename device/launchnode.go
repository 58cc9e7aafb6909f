package device

import "github.com/gpuactor/gpuactor/internal/backend"

// Kernel is the kernel the spec launches.
func (s LaunchSpec) Kernel() *Kernel { return s.k }

// Config is the spec's launch shape.
func (s LaunchSpec) Config() Config { return s.cfg }

// Node is the checked launch as a graph kernel node's parameters, for the graphs package; on
// the actor thread, where it refuses an unloaded module and buffers freed since PrepareLaunch
// (or whose allocation failed), and fills in the buffers' addresses.
func (s LaunchSpec) Node() (backend.KernelNode, error) {
	k := s.k
	if err := resolveArgs(k, s.args, s.mems); err != nil {
		return backend.KernelNode{}, err
	}
	return backend.KernelNode{Kernel: k.h, Grid: s.cfg.Grid, Block: s.cfg.Block, SharedMem: s.cfg.SharedMem, Args: s.args}, nil
}
