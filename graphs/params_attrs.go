package graphs

import (
	"context"
	"fmt"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// A kernel node's launch attributes are the attribute fields of cuda.LaunchConfig
// (Cooperative, Cluster, ClusterScheduling, Priority, ProgrammaticSerialization,
// MemSyncDomain), set at AddKernel from its config and read and changed here.

func attrsOf(cfg cuda.LaunchConfig) backend.LaunchAttrs {
	return backend.LaunchAttrs{
		Cooperative: cfg.Cooperative, Cluster: cfg.Cluster, ClusterScheduling: uint8(cfg.ClusterScheduling),
		Priority: int32(cfg.Priority), ProgrammaticSerialization: cfg.ProgrammaticSerialization,
		MemSyncDomain: uint8(cfg.MemSyncDomain),
	}
}

// Attributes is kernel node n's launch attributes, in the attribute fields of a
// cuda.LaunchConfig; its shape fields (Grid, Block, SharedMem) are zero, and so is
// ProgrammaticSerialization, which the runtime does not read back from a node.
func (n *Node) Attributes(ctx context.Context) (cuda.LaunchConfig, error) {
	return onNode(ctx, n, "reading the attributes of", []Kind{KernelNode}, func(rt backend.Device) (cuda.LaunchConfig, error) {
		a, err := rt.GraphKernelNodeGetAttrs(n.h)
		return cuda.LaunchConfig{
			Cooperative: a.Cooperative, Cluster: a.Cluster, ClusterScheduling: cuda.ClusterSchedulingPolicy(a.ClusterScheduling),
			Priority:      int(a.Priority),
			MemSyncDomain: cuda.MemSyncDomain(a.MemSyncDomain),
		}, err
	})
}

// SetAttributes sets on kernel node n each launch attribute cfg gives (its non-zero attribute
// fields; its shape is ignored); the node's other attributes keep their values. Attributes
// the node's kernel or shape cannot take are refused and change nothing. Executable graphs
// made before keep theirs.
func (n *Node) SetAttributes(ctx context.Context, cfg cuda.LaunchConfig) error {
	_, err := onNode(ctx, n, "setting the attributes of", []Kind{KernelNode}, func(rt backend.Device) (struct{}, error) {
		return struct{}{}, rt.GraphKernelNodeSetAttrs(n.h, attrsOf(cfg))
	})
	return err
}

// CopyAttributes gives kernel node n the launch attributes of kernel node from, a node of a
// graph of the same device.
func (n *Node) CopyAttributes(ctx context.Context, from *Node) error {
	if err := from.of(KernelNode); err != nil {
		return err
	}
	if n != nil && from.g.dev != n.g.dev {
		return wrongDevice(fmt.Sprintf("attribute source %s", from), from.g.dev, n.g.dev)
	}
	_, err := onNode(ctx, n, "copying attributes to", []Kind{KernelNode}, func(rt backend.Device) (struct{}, error) {
		if from.g.closed.Load() {
			return struct{}{}, closed("graph of the attribute source")
		}
		return struct{}{}, rt.GraphKernelNodeCopyAttributes(n.h, from.h)
	})
	return err
}
