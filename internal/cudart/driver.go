package cudart

import (
	"fmt"

	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/clib"
)

// Driver API functions reached through cudaGetDriverEntryPoint (used to load modules on runtimes
// without cudaLibraryLoadData, i.e. before 12.8). None takes a struct by value.
const (
	drvModuleLoadData = iota
	drvModuleGetFunction
	drvModuleUnload
	drvLaunchKernel
	drvGetErrorString
	drvKernelGetFunction
	// Graph kernel nodes (graph_kernel.go).
	drvGraphAddKernelNode
	drvGraphExecKernelNodeSetParams
	// Occupancy of a CUfunction (occupancy.go).
	drvOccupancyMaxActiveBlocksPerMultiprocessor
	// Primary context state, to refuse device flags once the context exists (devmgmt.go).
	drvDeviceGet
	drvDevicePrimaryCtxGetState
	// Execution control, launch attributes and occupancy of a CUfunction (funcattr.go,
	// launchex.go, occupancy.go).
	drvFuncGetAttribute
	drvFuncSetAttribute
	drvFuncSetCacheConfig
	drvFuncGetName      // 12.3+
	drvFuncGetParamInfo // 12.4+
	drvLaunchKernelEx   // 12.0+
	drvLaunchCooperativeKernel
	drvOccupancyMaxActiveBlocksPerMultiprocessorWithFlags
	drvOccupancyAvailableDynamicSMemPerBlock
	drvOccupancyMaxPotentialClusterSize // 12.0+
	drvOccupancyMaxActiveClusters       // 12.0+
	drvGraphKernelNodeSetAttribute
	// Module globals (global.go).
	drvModuleGetGlobal
	// A graph's kernel node (graph_params.go).
	drvGraphKernelNodeSetParams
	// A kernel node's parameters read back (graph_kernelparams.go).
	drvGraphKernelNodeGetParams
	// Waiters' event queries from any thread (anythread.go).
	drvEventQuery
	numDriverSyms
)

var driverSymNames = [numDriverSyms]string{
	drvModuleLoadData:    "cuModuleLoadData",
	drvModuleGetFunction: "cuModuleGetFunction",
	drvModuleUnload:      "cuModuleUnload",
	drvLaunchKernel:      "cuLaunchKernel",
	drvGetErrorString:    "cuGetErrorString",
	drvKernelGetFunction: "cuKernelGetFunction",

	drvGraphAddKernelNode:           "cuGraphAddKernelNode",
	drvGraphExecKernelNodeSetParams: "cuGraphExecKernelNodeSetParams",

	drvOccupancyMaxActiveBlocksPerMultiprocessor: "cuOccupancyMaxActiveBlocksPerMultiprocessor",

	drvDeviceGet:                "cuDeviceGet",
	drvDevicePrimaryCtxGetState: "cuDevicePrimaryCtxGetState",
	drvFuncGetAttribute:         "cuFuncGetAttribute",
	drvFuncSetAttribute:         "cuFuncSetAttribute",
	drvFuncSetCacheConfig:       "cuFuncSetCacheConfig",
	drvFuncGetName:              "cuFuncGetName",
	drvFuncGetParamInfo:         "cuFuncGetParamInfo",
	drvLaunchKernelEx:           "cuLaunchKernelEx",
	drvLaunchCooperativeKernel:  "cuLaunchCooperativeKernel",
	drvOccupancyMaxActiveBlocksPerMultiprocessorWithFlags: "cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags",
	drvOccupancyAvailableDynamicSMemPerBlock:              "cuOccupancyAvailableDynamicSMemPerBlock",
	drvOccupancyMaxPotentialClusterSize:                   "cuOccupancyMaxPotentialClusterSize",
	drvOccupancyMaxActiveClusters:                         "cuOccupancyMaxActiveClusters",
	drvGraphKernelNodeSetAttribute:                        "cuGraphKernelNodeSetAttribute",
	// Module globals (global.go): the entry point resolves to cuModuleGetGlobal_v2.
	drvModuleGetGlobal: "cuModuleGetGlobal",
	// A graph's kernel node: the entry point resolves to cuGraphKernelNodeSetParams_v2 on 12+.
	drvGraphKernelNodeSetParams: "cuGraphKernelNodeSetParams",
	// A kernel node's parameters read back: the entry point resolves to
	// cuGraphKernelNodeGetParams_v2 (CUDA_KERNEL_NODE_PARAMS_v2, with kern and ctx) on 12+.
	drvGraphKernelNodeGetParams: "cuGraphKernelNodeGetParams",
	// Waiters' event queries from any thread (anythread.go): CUevent is cudaEvent_t.
	drvEventQuery: "cuEventQuery",
}

// cudaDriverEntryPointQueryResult values.
const (
	entryPointSuccess             = 0
	entryPointSymbolNotFound      = 1
	entryPointVersionNotSufficent = 2
)

const (
	codeInvalidValue          = int32(cudaerr.InvalidValue)
	codeInvalidResourceHandle = int32(cudaerr.InvalidResourceHandle)
)

// driverEntryPoint resolves a driver function with cudaGetDriverEntryPoint (flags
// cudaEnableDefault): the 3-argument form on 11.x, the 4-argument form with a status out
// parameter on 12.x and 13.x.
func (r *Runtime) driverEntryPoint(name string) (uintptr, error) {
	fn, status, err := r.getDriverEntryPoint(name, 0)
	if err != nil {
		return 0, err // e.g. no driver: not cached, the next call asks again
	}
	if fn == 0 || status != entryPointSuccess {
		detail := "cudaGetDriverEntryPoint returned no function"
		switch status {
		case entryPointSymbolNotFound:
			detail = "the driver has no such function"
		case entryPointVersionNotSufficent:
			detail = "the driver's function is newer than this runtime"
		}
		return 0, &SymbolError{Symbol: name, Library: "the CUDA driver (via " + r.Path() + ")",
			Version: r.versionHint(), Detail: detail}
	}
	return fn, nil
}

// getDriverEntryPoint is cudaGetDriverEntryPoint with flags: the function's address (0 when
// not found) and the driver's status (entryPoint*; always success from the 3-argument form of
// 11.x, which has none).
func (r *Runtime) getDriverEntryPoint(name string, flags uint64) (fn uintptr, status int32, err error) {
	if r.major >= 12 {
		err = r.call(fnGetDriverEntryPoint, uintptr(unsafe.Pointer(cstr(name))),
			uintptr(unsafe.Pointer(&fn)), uintptr(flags), uintptr(unsafe.Pointer(&status)))
	} else {
		err = r.call(fnGetDriverEntryPoint, uintptr(unsafe.Pointer(cstr(name))),
			uintptr(unsafe.Pointer(&fn)), uintptr(flags))
	}
	return fn, status, err
}

// driverCall invokes a driver function and maps its CUresult. CUDA_ERROR_* values equal the
// runtime's cudaError values for the codes module loading and launching return (out of memory,
// invalid image/PTX, not found, launch failures…), so the result is a *cudaerr.Error whose Op is
// the driver function's name.
//
//go:uintptrescapes
func (r *Runtime) driverCall(id int, args ...uintptr) error {
	f := getFrame()
	defer putFrame(f)
	if len(args) > len(f.w) {
		return fmt.Errorf("gpuactor/cudart: %s called with %d argument words, the trampoline takes %d", driverSymNames[id], len(args), len(f.w))
	}
	copy(f.w[:], args)
	return r.invokeDriver(id, f)
}

// driverError builds the error for a CUresult, with cuGetErrorString's text when available.
func (r *Runtime) driverError(op string, code int32) error {
	msg := ""
	if fn, err := r.drv.get(drvGetErrorString); err == nil {
		var p uintptr
		if ret, _, _ := purego.SyscallN(fn, uintptr(uint32(code)), uintptr(unsafe.Pointer(&p))); int32(ret) == 0 {
			msg = clib.GoString(p)
		}
	}
	if msg == "" {
		msg = cudaerr.Code(code).Message()
	}
	return &cudaerr.Error{Op: op, Code: cudaerr.Code(code), Message: msg}
}
