package cudart

import (
	"unsafe"

	"github.com/gpuactor/gpuactor/internal/backend"
)

// ModuleGlobal is the device address and size in bytes of the __device__ or __constant__
// variable name of m: cudaLibraryGetGlobal for a library (the address in the calling thread's
// current context), cuModuleGetGlobal for a driver module.
func (r *Runtime) ModuleGlobal(m Module, name string) (DevicePtr, uint64, error) {
	var p uintptr
	var size uint64 // size_t
	var err error
	switch m.API {
	case LibraryAPI:
		err = r.call(fnLibraryGetGlobal, uintptr(unsafe.Pointer(&p)), uintptr(unsafe.Pointer(&size)), m.Handle,
			uintptr(unsafe.Pointer(cstr(name))))
	case DriverAPI:
		err = r.driverCall(drvModuleGetGlobal, uintptr(unsafe.Pointer(&p)), uintptr(unsafe.Pointer(&size)), m.Handle,
			uintptr(unsafe.Pointer(cstr(name))))
	default:
		err = r.newError("ModuleGlobal", codeInvalidResourceHandle)
	}
	if err != nil {
		return 0, 0, err
	}
	return DevicePtr(p), size, nil
}

// ModuleGlobal finds a variable of a module loaded on this device.
func (d *device) ModuleGlobal(m backend.Module, name string) (DevicePtr, uint64, error) {
	d.b.mu.RLock()
	e, ok := d.b.modules[m]
	d.b.mu.RUnlock()
	if !ok {
		return 0, 0, d.rt.newError("ModuleGlobal", codeInvalidResourceHandle)
	}
	return d.rt.ModuleGlobal(e.mod, name)
}
