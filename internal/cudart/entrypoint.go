package cudart

import (
	"fmt"
	"unsafe"

	"github.com/gpuactor/gpuactor/cudaerr"
)

// DriverEntryPoint is the address of the driver function symbol (a base name: cuMemAlloc for
// cuMemAlloc_v2) in the ABI CUDA version version defines (0: this runtime's own), searched
// with flags (cudaEnableDefault, cudaEnableLegacyStream or cudaEnablePerThreadDefaultStream):
// cudaGetDriverEntryPointByVersion, or on runtimes before 12.5, which lack it,
// cudaGetDriverEntryPoint, which answers for the runtime's own version only. A symbol the
// driver lacks, or lacks in that version, is a cudaErrorSymbolNotFound error saying which.
func (r *Runtime) DriverEntryPoint(symbol string, version int, flags uint64) (uintptr, error) {
	own, err := r.RuntimeVersion()
	if err != nil {
		return 0, err
	}
	if version == 0 {
		version = own
	}
	var fn uintptr
	var status int32
	op := "cudaGetDriverEntryPointByVersion"
	switch {
	case r.syms.has(fnGetDriverEntryPointByVersion):
		err = r.call(fnGetDriverEntryPointByVersion, uintptr(unsafe.Pointer(cstr(symbol))), uintptr(unsafe.Pointer(&fn)),
			uintptr(version), uintptr(flags), uintptr(unsafe.Pointer(&status)))
	case version != own:
		return 0, &cudaerr.Error{Op: op, Code: cudaerr.NotSupported,
			Message: fmt.Sprintf("runtime %d has no %s: it can find driver functions only as its own version defines them, not %d", own, op, version)}
	default:
		op = "cudaGetDriverEntryPoint"
		fn, status, err = r.getDriverEntryPoint(symbol, flags)
	}
	if err != nil {
		return 0, err
	}
	if fn == 0 || status != entryPointSuccess {
		why := "the driver has no such function"
		if status == entryPointVersionNotSufficent {
			why = fmt.Sprintf("the driver's function is newer than CUDA %d", version)
		}
		return 0, &cudaerr.Error{Op: op, Code: cudaerr.SymbolNotFound, Message: fmt.Sprintf("%s: %s", symbol, why)}
	}
	return fn, nil
}
