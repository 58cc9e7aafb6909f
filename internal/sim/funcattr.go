package sim

import (
	"strconv"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// kernelAttrs are a simulated kernel's settable attributes (cudaFuncSetAttribute,
// cudaFuncSetCacheConfig). A simulated kernel is Go code: it uses no registers, no static
// shared, constant or local memory, and so may raise its dynamic shared memory to the
// device's whole opt-in limit.
type kernelAttrs struct {
	maxDynamicShared int // cudaFuncAttributeMaxDynamicSharedMemorySize: the per-block default until raised
	carveout         int // percent, -1 for no preference
	requiredCluster  backend.Dim3
	nonPortable      bool
	scheduling       int
	cache            uint8
}

func (d *device) defaultKernelAttrs() kernelAttrs {
	return kernelAttrs{maxDynamicShared: d.attrs[backend.AttrMaxSharedMemoryPerBlock], carveout: -1}
}

// liveKernel finds a live kernel of this device for op, or fails with
// cudaerr.InvalidDeviceFunction.
func (d *device) liveKernel(op string, kh backend.Kernel) (*kernel, error) {
	if err := d.alive(op); err != nil {
		return nil, err
	}
	d.b.mu.RLock()
	k := d.b.kernels[kh]
	d.b.mu.RUnlock()
	if k == nil {
		return nil, d.fail(op, cudaerr.InvalidDeviceFunction, "kernel %#x is not a live kernel (its module was unloaded, or it was never looked up)", uintptr(kh))
	}
	return k, nil
}

// kernelAttrsOf reads k's settable attributes.
func (d *device) kernelAttrsOf(k *kernel) kernelAttrs {
	d.b.mu.RLock()
	defer d.b.mu.RUnlock()
	return k.attrs
}

// checkKernelShared refuses a launch asking more dynamic shared memory than the kernel's
// limit, as the runtime does (cudaErrorInvalidValue) until cudaFuncAttributeMaxDynamicSharedMemorySize
// raises it.
func (d *device) checkKernelShared(op string, k *kernel, sharedMem uint32) error {
	if limit := d.kernelAttrsOf(k).maxDynamicShared; int(sharedMem) > limit {
		return d.fail(op, cudaerr.InvalidValue, "kernel %q: %d bytes of dynamic shared memory exceed the kernel's limit of %d (raise it with cudaFuncAttributeMaxDynamicSharedMemorySize, up to the device's %d)",
			k.name, sharedMem, limit, d.attrs[backend.AttrMaxSharedMemoryPerBlockOptin])
	}
	return nil
}

// FuncAttributes reports a simulated kernel's attributes: the device's thread limit, no
// registers or static memory, the architecture of the device, and what was set.
func (d *device) FuncAttributes(kh backend.Kernel) (backend.FuncAttributes, error) {
	k, err := d.liveKernel("cudaFuncGetAttributes", kh)
	if err != nil {
		return backend.FuncAttributes{}, err
	}
	a := d.kernelAttrsOf(k)
	arch := d.attrs[backend.AttrComputeCapabilityMajor]*10 + d.attrs[backend.AttrComputeCapabilityMinor]
	return backend.FuncAttributes{
		MaxThreadsPerBlock: d.attrs[backend.AttrMaxThreadsPerBlock], PTXVersion: arch, BinaryVersion: arch,
		MaxDynamicSharedSizeBytes: a.maxDynamicShared, PreferredSharedCarveout: a.carveout,
		RequiredCluster: a.requiredCluster, ClusterScheduling: cuda.ClusterSchedulingPolicy(a.scheduling),
		NonPortableClusterSizeAllowed: a.nonPortable,
	}, nil
}

// FuncSetAttribute sets one attribute, with the runtime's checks: dynamic shared memory
// within the opt-in limit, a carveout of -1 to 100 percent, cluster extents of 0 or more, a
// flag of 0 or 1, a known scheduling policy. Anything else is cudaerr.InvalidValue.
func (d *device) FuncSetAttribute(kh backend.Kernel, attr backend.FuncAttr, value int) error {
	const op = "cudaFuncSetAttribute"
	k, err := d.liveKernel(op, kh)
	if err != nil {
		return err
	}
	bad := func(limits string) error {
		return d.fail(op, cudaerr.InvalidValue, "kernel %q: attribute %d: value %d is outside %s", k.name, attr, value, limits)
	}
	cc := d.attrs[backend.AttrComputeCapabilityMajor]
	d.b.mu.Lock()
	defer d.b.mu.Unlock()
	a := &k.attrs
	switch attr {
	case backend.FuncAttrMaxDynamicSharedMemorySize:
		optin := d.attrs[backend.AttrMaxSharedMemoryPerBlockOptin]
		if value < 0 || value > optin {
			return bad("0 to the device's opt-in limit of " + strconv.Itoa(optin) + " bytes")
		}
		a.maxDynamicShared = value
	case backend.FuncAttrPreferredSharedMemoryCarveout:
		if value < -1 || value > 100 {
			return bad("-1 to 100 percent")
		}
		a.carveout = value
	case backend.FuncAttrRequiredClusterWidth, backend.FuncAttrRequiredClusterHeight, backend.FuncAttrRequiredClusterDepth,
		backend.FuncAttrNonPortableClusterSizeAllowed, backend.FuncAttrClusterSchedulingPolicy:
		if cc < 9 {
			return d.fail(op, cudaerr.NotSupported, "kernel %q: cluster attributes need compute capability 9.0, the device has %d.%d", k.name, cc, d.attrs[backend.AttrComputeCapabilityMinor])
		}
		switch attr {
		case backend.FuncAttrRequiredClusterWidth, backend.FuncAttrRequiredClusterHeight, backend.FuncAttrRequiredClusterDepth:
			if value < 0 || value > 16 {
				return bad("0 to 16 blocks")
			}
			switch attr {
			case backend.FuncAttrRequiredClusterWidth:
				a.requiredCluster.X = uint32(value)
			case backend.FuncAttrRequiredClusterHeight:
				a.requiredCluster.Y = uint32(value)
			default:
				a.requiredCluster.Z = uint32(value)
			}
		case backend.FuncAttrNonPortableClusterSizeAllowed:
			if value != 0 && value != 1 {
				return bad("0 to 1")
			}
			a.nonPortable = value == 1
		default:
			if value < 0 || value > 2 {
				return bad("0 to 2 (cudaClusterSchedulingPolicy)")
			}
			a.scheduling = value
		}
	default:
		return d.fail(op, cudaerr.InvalidValue, "kernel %q: attribute %d cannot be set", k.name, attr)
	}
	return nil
}

// FuncSetCacheConfig records the kernel's cache preference (0 to 3); the simulator has no
// cache to split.
func (d *device) FuncSetCacheConfig(kh backend.Kernel, c uint8) error {
	const op = "cudaFuncSetCacheConfig"
	k, err := d.liveKernel(op, kh)
	if err != nil {
		return err
	}
	if c > 3 {
		return d.fail(op, cudaerr.InvalidValue, "kernel %q: cache configuration %d is outside 0 to 3 (cudaFuncCache)", k.name, c)
	}
	d.b.mu.Lock()
	k.attrs.cache = c
	d.b.mu.Unlock()
	return nil
}

// FuncName is the name the kernel was looked up by.
func (d *device) FuncName(kh backend.Kernel) (string, error) {
	k, err := d.liveKernel("cudaFuncGetName", kh)
	if err != nil {
		return "", err
	}
	return k.name, nil
}

// FuncParamSizes is cudaerr.NotSupported: a simulated kernel is a Go function without an
// image that describes its parameters.
func (d *device) FuncParamSizes(kh backend.Kernel) ([]uint64, error) {
	const op = "cudaFuncGetParamInfo"
	k, err := d.liveKernel(op, kh)
	if err != nil {
		return nil, err
	}
	return nil, newError(op, cudaerr.NotSupported, k.label+": a simulated kernel has no parameter information")
}
