package cudart

import (
	"bytes"
	"fmt"
	"unsafe"

	"github.com/gpuactor/gpuactor/internal/backend"
)

// ModuleAPI says which CUDA API loaded a module, and so how its kernels are launched.
type ModuleAPI uint8

// Module loading paths.
const (
	// LibraryAPI is the runtime's cudaLibraryLoadData / cudaLibraryGetKernel (CUDA 12.8+); the
	// kernel, a cudaKernel_t, launches with cudaLaunchKernel. A library is not tied to one
	// context: its kernels launch on any device.
	LibraryAPI ModuleAPI = iota + 1
	// DriverAPI is the driver's cuModuleLoadData / cuModuleGetFunction / cuLaunchKernel,
	// reached through cudaGetDriverEntryPoint. The module lives in the context current when it
	// was loaded (the device of the calling thread).
	DriverAPI
)

// String names the API.
func (a ModuleAPI) String() string {
	switch a {
	case LibraryAPI:
		return "library"
	case DriverAPI:
		return "driver"
	}
	return fmt.Sprintf("ModuleAPI(%d)", uint8(a))
}

// Module is a loaded code image: a cudaLibrary_t or a CUmodule, tagged with its API.
type Module struct {
	Handle uintptr
	API    ModuleAPI
}

// Kernel is a launchable function: a cudaKernel_t or a CUfunction, tagged with its API.
// Func is the CUfunction to launch with cuLaunchKernel: the kernel itself for DriverAPI, and
// for LibraryAPI the kernel's function in the context current at lookup (cuKernelGetFunction)
// when the driver has it, else 0 and the kernel launches with cudaLaunchKernel.
type Kernel struct {
	Handle uintptr
	API    ModuleAPI
	Func   uintptr
}

// ModuleAPI is the path LoadModule takes: LibraryAPI when the runtime exports
// cudaLibraryLoadData (12.8+), else DriverAPI.
func (r *Runtime) ModuleAPI() ModuleAPI {
	if r.syms.has(fnLibraryLoadData) && r.syms.has(fnLibraryGetKernel) && r.syms.has(fnLibraryUnload) {
		return LibraryAPI
	}
	return DriverAPI
}

// LoadModule loads a PTX, cubin or fatbin image through ModuleAPI's path. kind may be 0 to tell
// from the bytes (ELF and fatbin magic mean binary, anything else PTX). PTX is passed
// NUL-terminated (a terminator is appended to a copy when missing). With DriverAPI the module is
// loaded into the primary context of the calling thread's current device (SetDevice).
func (r *Runtime) LoadModule(image []byte, kind ImageKind) (Module, error) {
	return r.LoadModuleWith(r.ModuleAPI(), image, kind)
}

// LoadModuleWith is LoadModule through a chosen API (DriverAPI works on every runtime with a
// driver; LibraryAPI needs 12.8+ and otherwise fails with a *SymbolError).
func (r *Runtime) LoadModuleWith(api ModuleAPI, image []byte, kind ImageKind) (Module, error) {
	img := moduleImage(image, kind)
	if len(img) == 0 {
		return Module{}, r.newError("LoadModule", codeInvalidValue)
	}
	var h uintptr
	var err error
	switch api {
	case LibraryAPI:
		err = r.call(fnLibraryLoadData, uintptr(unsafe.Pointer(&h)), uintptr(unsafe.Pointer(&img[0])),
			0, 0, 0, 0, 0, 0)
	case DriverAPI:
		// The driver loads into the thread's current context, which the runtime only binds to a
		// thread on its first call there: cudaFree(0) makes sure it is.
		if err = r.call(fnFree, 0); err == nil {
			err = r.driverCall(drvModuleLoadData, uintptr(unsafe.Pointer(&h)), uintptr(unsafe.Pointer(&img[0])))
		}
	default:
		err = r.newError("LoadModule", codeInvalidValue)
	}
	if err != nil {
		return Module{}, err
	}
	return Module{Handle: h, API: api}, nil
}

// ModuleKernel looks up an extern "C" kernel of m by name (cudaLibraryGetKernel or
// cuModuleGetFunction). A missing name fails with cudaerr.SymbolNotFound (or
// cudaerr.InvalidDeviceFunction, depending on the runtime).
func (r *Runtime) ModuleKernel(m Module, name string) (Kernel, error) {
	var k uintptr
	var err error
	switch m.API {
	case LibraryAPI:
		err = r.call(fnLibraryGetKernel, uintptr(unsafe.Pointer(&k)), m.Handle, uintptr(unsafe.Pointer(cstr(name))))
	case DriverAPI:
		err = r.driverCall(drvModuleGetFunction, uintptr(unsafe.Pointer(&k)), m.Handle, uintptr(unsafe.Pointer(cstr(name))))
	default:
		err = r.newError("ModuleKernel", codeInvalidResourceHandle)
	}
	if err != nil {
		return Kernel{}, err
	}
	kern := Kernel{Handle: k, API: m.API}
	switch m.API {
	case DriverAPI:
		kern.Func = k
	case LibraryAPI:
		// Launching the context's CUfunction through the driver costs less per launch from Go
		// than cudaLaunchKernel with the cudaKernel_t, though the two cost the same from C++
		// (bench/results/FINDINGS.md). Without cuKernelGetFunction the runtime path still
		// works.
		var f uintptr
		if r.driverCall(drvKernelGetFunction, uintptr(unsafe.Pointer(&f)), k) == nil {
			kern.Func = f
		}
	}
	return kern, nil
}

// UnloadModule unloads m (cudaLibraryUnload or cuModuleUnload); its kernels become invalid.
func (r *Runtime) UnloadModule(m Module) error {
	switch m.API {
	case LibraryAPI:
		return r.call(fnLibraryUnload, m.Handle)
	case DriverAPI:
		return r.driverCall(drvModuleUnload, m.Handle)
	}
	return r.newError("UnloadModule", codeInvalidResourceHandle)
}

// moduleImage returns the bytes to hand to the loader: binaries as they are, PTX with a NUL.
func moduleImage(image []byte, kind ImageKind) []byte {
	if len(image) == 0 {
		return nil
	}
	if kind == 0 {
		kind = backend.ImagePTX
		if isBinaryImage(image) {
			kind = backend.ImageCubin
		}
	}
	if kind == backend.ImagePTX && image[len(image)-1] != 0 {
		out := make([]byte, len(image)+1)
		copy(out, image)
		return out
	}
	return image
}

// isBinaryImage recognizes an ELF cubin or a fatbin (magic 0xBA55ED50, little-endian).
func isBinaryImage(b []byte) bool {
	return bytes.HasPrefix(b, []byte("\x7fELF")) || bytes.HasPrefix(b, []byte{0x50, 0xED, 0x55, 0xBA})
}
