package device

import (
	"context"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
)

// Attributes reads the kernel's attributes: registers, static, constant and local memory,
// its thread limit, PTX and binary versions, shared memory and cluster settings
// (cudaFuncGetAttributes). It returns once the device answered.
func (k *Kernel) Attributes(ctx context.Context) (cuda.KernelAttributes, error) {
	return k.core().Attributes(ctx)
}

// RuntimeName is the kernel's name as the runtime has it (cudaFuncGetName): the mangled name
// of a C++ kernel, the extern "C" name otherwise. It returns once the device answered; a
// runtime before 12.3 answers an error matching cudaerr.NotSupported.
func (k *Kernel) RuntimeName(ctx context.Context) (string, error) { return k.core().RuntimeName(ctx) }

// ParamSizes lists the sizes in bytes of the kernel's parameters as its image describes them
// (cudaFuncGetParamInfo), also for a cubin loaded without source. It returns once the device
// answered; a runtime before 12.4, or the simulator, answers an error matching
// cudaerr.NotSupported.
func (k *Kernel) ParamSizes(ctx context.Context) ([]int, error) { return k.core().ParamSizes(ctx) }

// SetMaxDynamicSharedMemory sets the most dynamic shared memory a launch of the kernel may ask
// for (cudaFuncAttributeMaxDynamicSharedMemorySize), within 0 and the device's opt-in limit
// (Properties.SharedMemPerBlockOptin). Launches need not call it: one that asks for more than
// 48 KiB raises the limit itself. It returns once the device has the value.
func (k *Kernel) SetMaxDynamicSharedMemory(ctx context.Context, bytes int) error {
	return k.core().SetMaxDynamicSharedMemory(ctx, bytes)
}

// SetPreferredSharedCarveout sets the share of the unified L1/shared memory the kernel
// prefers as shared memory, in percent (cudaFuncAttributePreferredSharedMemoryCarveout):
// 0 to 100, or -1 for no preference. A hint: the driver may choose otherwise. It returns once
// the device has the value.
func (k *Kernel) SetPreferredSharedCarveout(ctx context.Context, percent int) error {
	return k.core().SetAttribute(ctx, backend.FuncAttrPreferredSharedMemoryCarveout, percent)
}

// SetRequiredClusterShape sets the cluster shape every launch of the kernel must use
// (cudaFuncAttributeRequiredClusterWidth, Height, Depth; compute capability 9.0 and later);
// the zero Dim3 clears it. A kernel compiled with __cluster_dims__ refuses it. It returns once
// the device has the shape.
func (k *Kernel) SetRequiredClusterShape(ctx context.Context, c cuda.Dim3) error {
	if (c.X == 0 || c.Y == 0 || c.Z == 0) && c != (cuda.Dim3{}) {
		return core.Invalid("kernel %s: required cluster shape %v has a zero extent (use cuda.Dim, or the zero Dim3 to clear it)", k.Name(), c)
	}
	for _, a := range []struct {
		attr backend.FuncAttr
		v    uint32
	}{
		{backend.FuncAttrRequiredClusterWidth, c.X}, {backend.FuncAttrRequiredClusterHeight, c.Y}, {backend.FuncAttrRequiredClusterDepth, c.Z},
	} {
		if err := k.core().SetAttribute(ctx, a.attr, int(a.v)); err != nil {
			return err
		}
	}
	return nil
}

// SetNonPortableClusterSizeAllowed lets launches of the kernel use clusters of more than the
// portable 8 blocks, up to 16 where the device supports it
// (cudaFuncAttributeNonPortableClusterSizeAllowed). It returns once the device has the value.
func (k *Kernel) SetNonPortableClusterSizeAllowed(ctx context.Context, allowed bool) error {
	v := 0
	if allowed {
		v = 1
	}
	return k.core().SetAttribute(ctx, backend.FuncAttrNonPortableClusterSizeAllowed, v)
}

// SetClusterSchedulingPolicy sets the kernel's cluster scheduling policy preference
// (cudaFuncAttributeClusterSchedulingPolicyPreference). It returns once the device has the
// value.
func (k *Kernel) SetClusterSchedulingPolicy(ctx context.Context, p cuda.ClusterSchedulingPolicy) error {
	return k.core().SetAttribute(ctx, backend.FuncAttrClusterSchedulingPolicy, int(p))
}

// SetCacheConfig sets the kernel's preferred split of on-chip memory between L1 cache and
// shared memory (cudaFuncSetCacheConfig). A hint: the driver may choose otherwise. It returns
// once the device has the value.
func (k *Kernel) SetCacheConfig(ctx context.Context, c cuda.CacheConfig) error {
	return k.core().SetCacheConfig(ctx, c)
}
