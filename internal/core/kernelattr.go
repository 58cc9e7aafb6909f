package core

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// kernelControl is what gpuactor remembers of a kernel's settable attributes.
type kernelControl struct {
	// dynamicShared is the kernel's dynamic shared memory limit as last set on the device (0:
	// the device's default); on the actor thread only.
	dynamicShared int
	// coResident caches the occupancy answers cooperative launches are checked against, by
	// block size and shared memory; on the actor thread only.
	coResident map[[2]int]int
	// nonPortable: the kernel allows clusters above 8 blocks; read by PrepareLaunch off the
	// actor thread.
	nonPortable atomic.Bool
}

// Attributes reads the kernel's attributes (cudaFuncGetAttributes); it returns once the
// device answered.
func (k *Kernel) Attributes(ctx context.Context) (cuda.KernelAttributes, error) {
	if k == nil {
		return cuda.KernelAttributes{}, Invalid("Attributes of a nil kernel")
	}
	return onKernel(ctx, k, "reading the attributes", func(rt backend.Device) (cuda.KernelAttributes, error) {
		return rt.FuncAttributes(k.h)
	})
}

// RuntimeName is the kernel's name as the runtime has it (cudaFuncGetName).
func (k *Kernel) RuntimeName(ctx context.Context) (string, error) {
	if k == nil {
		return "", Invalid("RuntimeName of a nil kernel")
	}
	return onKernel(ctx, k, "reading the name", func(rt backend.Device) (string, error) {
		return rt.FuncName(k.h)
	})
}

// ParamSizes lists the sizes in bytes of the kernel's parameters as its image describes them
// (cudaFuncGetParamInfo).
func (k *Kernel) ParamSizes(ctx context.Context) ([]int, error) {
	if k == nil {
		return nil, Invalid("ParamSizes of a nil kernel")
	}
	return onKernel(ctx, k, "reading the parameters", func(rt backend.Device) ([]int, error) {
		sizes, err := rt.FuncParamSizes(k.h)
		if err != nil {
			return nil, err
		}
		out := make([]int, len(sizes))
		for i, s := range sizes {
			out[i] = int(s)
		}
		return out, nil
	})
}

// SetMaxDynamicSharedMemory sets the most dynamic shared memory a launch of k may ask for
// (cudaFuncAttributeMaxDynamicSharedMemorySize); bytes must lie within 0 and the device's
// opt-in limit. A launch sets it itself when it asks for more than the default.
func (k *Kernel) SetMaxDynamicSharedMemory(ctx context.Context, bytes int) error {
	if k == nil {
		return Invalid("SetMaxDynamicSharedMemory of a nil kernel")
	}
	if lim := k.mod.dev.limits.MaxSharedMem; bytes < 0 || bytes > lim {
		return Invalid("kernel %s: %d bytes of dynamic shared memory are outside 0 to the device's opt-in limit of %d", k.name, bytes, lim)
	}
	_, err := onKernel(ctx, k, "setting the dynamic shared memory limit", func(rt backend.Device) (struct{}, error) {
		if err := rt.FuncSetAttribute(k.h, backend.FuncAttrMaxDynamicSharedMemorySize, bytes); err != nil {
			return struct{}{}, err
		}
		k.ctl.dynamicShared = bytes
		k.ctl.coResident = nil
		return struct{}{}, nil
	})
	return err
}

// SetAttribute sets one of k's attributes other than the dynamic shared memory limit, after
// checking value against what CUDA accepts for attr.
func (k *Kernel) SetAttribute(ctx context.Context, attr backend.FuncAttr, value int) error {
	if k == nil {
		return Invalid("SetAttribute of a nil kernel")
	}
	lim := &k.mod.dev.limits
	switch attr {
	case backend.FuncAttrMaxDynamicSharedMemorySize:
		return k.SetMaxDynamicSharedMemory(ctx, value)
	case backend.FuncAttrPreferredSharedMemoryCarveout:
		if value < -1 || value > 100 {
			return Invalid("kernel %s: shared memory carveout %d%% is outside 0 to 100 (or -1, no preference)", k.name, value)
		}
	case backend.FuncAttrRequiredClusterWidth, backend.FuncAttrRequiredClusterHeight, backend.FuncAttrRequiredClusterDepth,
		backend.FuncAttrNonPortableClusterSizeAllowed, backend.FuncAttrClusterSchedulingPolicy:
		if lim.ccMajor < 9 {
			return Invalid("kernel %s: cluster attributes need compute capability 9.0, the device has %d.%d", k.name, lim.ccMajor, lim.ccMinor)
		}
		if attr == backend.FuncAttrClusterSchedulingPolicy && (value < 0 || value > int(cuda.ClusterSchedulingLoadBalancing)) {
			return Invalid("kernel %s: cluster scheduling policy %d is outside 0 to %d", k.name, value, cuda.ClusterSchedulingLoadBalancing)
		}
		if attr != backend.FuncAttrClusterSchedulingPolicy && attr != backend.FuncAttrNonPortableClusterSizeAllowed &&
			(value < 0 || value > nonPortableClusterSize) {
			return Invalid("kernel %s: a required cluster extent of %d is outside 0 to %d blocks", k.name, value, nonPortableClusterSize)
		}
	default:
		return Invalid("kernel %s: attribute %d cannot be set", k.name, attr)
	}
	_, err := onKernel(ctx, k, fmt.Sprintf("setting attribute %d to %d", attr, value), func(rt backend.Device) (struct{}, error) {
		if err := rt.FuncSetAttribute(k.h, attr, value); err != nil {
			return struct{}{}, err
		}
		if attr == backend.FuncAttrNonPortableClusterSizeAllowed {
			k.ctl.nonPortable.Store(value != 0)
		}
		return struct{}{}, nil
	})
	return err
}

// SetCacheConfig sets k's preferred split of L1 cache and shared memory
// (cudaFuncSetCacheConfig).
func (k *Kernel) SetCacheConfig(ctx context.Context, c cuda.CacheConfig) error {
	if k == nil {
		return Invalid("SetCacheConfig of a nil kernel")
	}
	if c > cuda.CachePreferEqual {
		return Invalid("kernel %s: cache configuration %d is outside 0 to %d", k.name, c, cuda.CachePreferEqual)
	}
	_, err := onKernel(ctx, k, "setting the cache configuration", func(rt backend.Device) (struct{}, error) {
		return struct{}{}, rt.FuncSetCacheConfig(k.h, uint8(c))
	})
	return err
}

// onKernel runs fn on k's device actor, refusing a closed module, and names the kernel and
// what was being done in fn's error.
func onKernel[T any](ctx context.Context, k *Kernel, doing string, fn func(rt backend.Device) (T, error)) (T, error) {
	m := k.mod
	return Run(ctx, m.dev, func(rt backend.Device, _ *Tracker) (T, error) {
		var zero T
		if m.closed.Load() {
			return zero, Closed("kernel %s: module %s was closed", k.name, m.name)
		}
		v, err := fn(rt)
		if err != nil {
			return zero, fmt.Errorf("gpuactor: kernel %s: %s: %w", k.name, doing, err)
		}
		return v, nil
	}).Await(ctx)
}
