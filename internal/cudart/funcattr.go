package cudart

import (
	"errors"
	"unsafe"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/clib"
)

// rtFuncAttributes is the runtime's struct cudaFuncAttributes: three size_t, thirteen ints
// and 16 reserved ints (the 13.0 layout; earlier runtimes fill a prefix of it).
type rtFuncAttributes struct {
	sharedSizeBytes, constSizeBytes, localSizeBytes uint64

	maxThreadsPerBlock, numRegs, ptxVersion, binaryVersion, cacheModeCA    int32
	maxDynamicSharedSizeBytes, preferredShmemCarveout, clusterDimMustBeSet int32
	requiredClusterWidth, requiredClusterHeight, requiredClusterDepth      int32
	clusterSchedulingPolicyPreference, nonPortableClusterSizeAllowed       int32
	reserved                                                               [16]int32
}

// CUfunction_attribute values read by FuncAttributes (0 to 7; 8 and up are backend.FuncAttr).
const (
	cuFuncMaxThreadsPerBlock = 0
	cuFuncSharedSizeBytes    = 1
	cuFuncConstSizeBytes     = 2
	cuFuncLocalSizeBytes     = 3
	cuFuncNumRegs            = 4
	cuFuncPTXVersion         = 5
	cuFuncBinaryVersion      = 6
	cuFuncCacheModeCA        = 7
)

// FuncAttributes reads k's attributes: attribute by attribute with cuFuncGetAttribute(int*,
// CUfunction_attribute, CUfunction) for a kernel with a CUfunction, else with
// cudaFuncGetAttributes(cudaFuncAttributes*, const void*) on the cudaKernel_t. Cluster
// attributes a driver does not know (before 12.0) read as 0.
func (r *Runtime) FuncAttributes(k Kernel) (backend.FuncAttributes, error) {
	if k.Func == 0 {
		var a rtFuncAttributes
		if err := r.call(fnFuncGetAttributes, uintptr(unsafe.Pointer(&a)), k.Handle); err != nil {
			return backend.FuncAttributes{}, err
		}
		return backend.FuncAttributes{
			SharedSizeBytes: a.sharedSizeBytes, ConstSizeBytes: a.constSizeBytes, LocalSizeBytes: a.localSizeBytes,
			MaxThreadsPerBlock: int(a.maxThreadsPerBlock), NumRegs: int(a.numRegs), PTXVersion: int(a.ptxVersion),
			BinaryVersion: int(a.binaryVersion), CacheModeCA: a.cacheModeCA != 0,
			MaxDynamicSharedSizeBytes: int(a.maxDynamicSharedSizeBytes), PreferredSharedCarveout: int(a.preferredShmemCarveout),
			ClusterDimMustBeSet:           a.clusterDimMustBeSet != 0,
			RequiredCluster:               cuda.Dim3{X: uint32(a.requiredClusterWidth), Y: uint32(a.requiredClusterHeight), Z: uint32(a.requiredClusterDepth)},
			ClusterScheduling:             cuda.ClusterSchedulingPolicy(a.clusterSchedulingPolicyPreference),
			NonPortableClusterSizeAllowed: a.nonPortableClusterSizeAllowed != 0,
		}, nil
	}
	var v [16]int32
	for attr := range v {
		err := r.driverCall(drvFuncGetAttribute, uintptr(unsafe.Pointer(&v[attr])), uintptr(attr), k.Func)
		if err != nil {
			if attr >= int(backend.FuncAttrClusterDimMustBeSet) && errors.Is(err, cudaerr.InvalidValue) {
				break // a driver before 12.0 has no cluster attributes
			}
			return backend.FuncAttributes{}, err
		}
	}
	return backend.FuncAttributes{
		SharedSizeBytes: uint64(v[cuFuncSharedSizeBytes]), ConstSizeBytes: uint64(v[cuFuncConstSizeBytes]),
		LocalSizeBytes: uint64(v[cuFuncLocalSizeBytes]), MaxThreadsPerBlock: int(v[cuFuncMaxThreadsPerBlock]),
		NumRegs: int(v[cuFuncNumRegs]), PTXVersion: int(v[cuFuncPTXVersion]), BinaryVersion: int(v[cuFuncBinaryVersion]),
		CacheModeCA:               v[cuFuncCacheModeCA] != 0,
		MaxDynamicSharedSizeBytes: int(v[backend.FuncAttrMaxDynamicSharedMemorySize]),
		PreferredSharedCarveout:   int(v[backend.FuncAttrPreferredSharedMemoryCarveout]),
		ClusterDimMustBeSet:       v[backend.FuncAttrClusterDimMustBeSet] != 0,
		RequiredCluster: cuda.Dim3{X: uint32(v[backend.FuncAttrRequiredClusterWidth]),
			Y: uint32(v[backend.FuncAttrRequiredClusterHeight]), Z: uint32(v[backend.FuncAttrRequiredClusterDepth])},
		ClusterScheduling:             cuda.ClusterSchedulingPolicy(v[backend.FuncAttrClusterSchedulingPolicy]),
		NonPortableClusterSizeAllowed: v[backend.FuncAttrNonPortableClusterSizeAllowed] != 0,
	}, nil
}

// FuncSetAttribute sets one of k's attributes: cuFuncSetAttribute(CUfunction,
// CUfunction_attribute, int), or cudaFuncSetAttribute(const void*, cudaFuncAttribute, int) on
// a cudaKernel_t without a CUfunction (the two enums agree).
func (r *Runtime) FuncSetAttribute(k Kernel, attr backend.FuncAttr, value int) error {
	if k.Func != 0 {
		return r.driverCall(drvFuncSetAttribute, k.Func, uintptr(attr), uintptr(uint32(int32(value))))
	}
	return r.call(fnFuncSetAttribute, k.Handle, uintptr(attr), uintptr(uint32(int32(value))))
}

// FuncSetCacheConfig sets k's cache preference: cuFuncSetCacheConfig(CUfunction, CUfunc_cache)
// or cudaFuncSetCacheConfig(const void*, cudaFuncCache) (the two enums agree).
func (r *Runtime) FuncSetCacheConfig(k Kernel, c uint8) error {
	if k.Func != 0 {
		return r.driverCall(drvFuncSetCacheConfig, k.Func, uintptr(c))
	}
	return r.call(fnFuncSetCacheConfig, k.Handle, uintptr(c))
}

// FuncName is k's name: cuFuncGetName(const char**, CUfunction) (12.3+) or
// cudaFuncGetName(const char**, const void*).
func (r *Runtime) FuncName(k Kernel) (string, error) {
	var p uintptr
	var err error
	if k.Func != 0 {
		err = r.driverCall(drvFuncGetName, uintptr(unsafe.Pointer(&p)), k.Func)
	} else {
		err = r.call(fnFuncGetName, uintptr(unsafe.Pointer(&p)), k.Handle)
	}
	if err != nil {
		return "", notSupported(err)
	}
	return clib.GoString(p), nil
}

// FuncParamSizes lists k's parameter sizes: cuFuncGetParamInfo(CUfunction, size_t index,
// size_t* offset, size_t* size) (12.4+) or cudaFuncGetParamInfo(const void*, size_t, size_t*,
// size_t*), asked for index 0, 1, … until the runtime answers cudaErrorInvalidValue past the
// last parameter.
func (r *Runtime) FuncParamSizes(k Kernel) ([]uint64, error) {
	sizes := []uint64{}
	for i := uintptr(0); ; i++ {
		var off, size uint64
		var err error
		if k.Func != 0 {
			err = r.driverCall(drvFuncGetParamInfo, k.Func, i, uintptr(unsafe.Pointer(&off)), uintptr(unsafe.Pointer(&size)))
		} else {
			err = r.call(fnFuncGetParamInfo, k.Handle, i, uintptr(unsafe.Pointer(&off)), uintptr(unsafe.Pointer(&size)))
		}
		if err != nil {
			if errors.Is(err, cudaerr.InvalidValue) {
				return sizes, nil
			}
			return nil, notSupported(err)
		}
		sizes = append(sizes, size)
		if i >= maxParams {
			return sizes, nil
		}
	}
}

// maxParams bounds FuncParamSizes' walk: a kernel's parameters take at most 32764 bytes.
const maxParams = 32764

// notSupported turns a missing symbol into a cudaerr.NotSupported error, which callers treat
// as "the runtime cannot say".
func notSupported(err error) error {
	var se *SymbolError
	if errors.As(err, &se) {
		return &cudaerr.Error{Op: se.Symbol, Code: cudaerr.NotSupported, Message: se.Error()}
	}
	return err
}

func (d *device) FuncAttributes(k backend.Kernel) (backend.FuncAttributes, error) {
	kern, err := d.kernel("cudaFuncGetAttributes", k)
	if err != nil {
		return backend.FuncAttributes{}, err
	}
	return d.rt.FuncAttributes(kern)
}

func (d *device) FuncSetAttribute(k backend.Kernel, attr backend.FuncAttr, value int) error {
	kern, err := d.kernel("cudaFuncSetAttribute", k)
	if err != nil {
		return err
	}
	return d.rt.FuncSetAttribute(kern, attr, value)
}

func (d *device) FuncSetCacheConfig(k backend.Kernel, c uint8) error {
	kern, err := d.kernel("cudaFuncSetCacheConfig", k)
	if err != nil {
		return err
	}
	return d.rt.FuncSetCacheConfig(kern, c)
}

func (d *device) FuncName(k backend.Kernel) (string, error) {
	kern, err := d.kernel("cudaFuncGetName", k)
	if err != nil {
		return "", err
	}
	return d.rt.FuncName(kern)
}

func (d *device) FuncParamSizes(k backend.Kernel) ([]uint64, error) {
	kern, err := d.kernel("cudaFuncGetParamInfo", k)
	if err != nil {
		return nil, err
	}
	return d.rt.FuncParamSizes(kern)
}
