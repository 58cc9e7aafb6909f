package backend

// ModuleGlobals is the module-variable part of the runtime API: the __device__ and
// __constant__ variables of a loaded module, found by name (cudaLibraryGetGlobal or
// cuModuleGetGlobal).
type ModuleGlobals interface {
	// ModuleGlobal is the device address and size in bytes of the variable name of module m,
	// in the device's context. A name the module does not define is cudaerr.SymbolNotFound
	// (or cudaerr.InvalidSymbol, depending on the runtime).
	ModuleGlobal(m Module, name string) (DevicePtr, uint64, error)
}
