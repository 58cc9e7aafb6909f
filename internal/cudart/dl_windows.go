package cudart

import (
	"syscall"
	"unsafe"
)

// kernel32's LoadLibraryExW and GetModuleFileNameW, which the syscall package does not wrap.
// kernel32 is a known DLL: it always comes from the system directory.
var (
	kernel32               = syscall.NewLazyDLL("kernel32.dll")
	procLoadLibraryExW     = kernel32.NewProc("LoadLibraryExW")
	procGetModuleFileNameW = kernel32.NewProc("GetModuleFileNameW")
)

// loadWithAlteredSearchPath makes LoadLibraryExW look for a DLL's dependencies in the DLL's
// own directory first, as CUDA's DLLs expect when they are loaded by full path.
const loadWithAlteredSearchPath = 0x8

// loadLibrary opens a DLL by name (the system's DLL search, PATH last) or by full path.
func loadLibrary(name string, flags uintptr) (uintptr, error) {
	p, err := syscall.UTF16PtrFromString(name)
	if err != nil {
		return 0, err
	}
	h, _, callErr := procLoadLibraryExW.Call(uintptr(unsafe.Pointer(p)), 0, flags)
	if h == 0 {
		return 0, callErr
	}
	return h, nil
}

// dlsym resolves an export of a loaded DLL (GetProcAddress).
func dlsym(handle uintptr, name string) (uintptr, error) {
	p, err := syscall.GetProcAddress(syscall.Handle(handle), name)
	if err != nil {
		return 0, err
	}
	return p, nil
}

// handlePath returns the file a module handle refers to, or "" when it cannot be told.
func handlePath(handle uintptr) string {
	buf := make([]uint16, syscall.MAX_LONG_PATH)
	n, _, _ := procGetModuleFileNameW.Call(handle, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
	if n == 0 || int(n) >= len(buf) {
		return ""
	}
	return syscall.UTF16ToString(buf[:n])
}
