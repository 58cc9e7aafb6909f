//go:build linux

package nvtx

import (
	"os"
	"runtime"
	"syscall"
	"unsafe"

	"github.com/ebitengine/purego"
)

// The NVTX v3 injection protocol (nvtxDetail/nvtxTypes.h, nvtxImpl.h): the tool's
// InitializeInjectionNvtx2(getExportTable) asks getExportTable for the callbacks table, whose
// GetModuleFunctionTable hands it, per module, an array of pointers to the client's function
// pointer slots; the tool writes its functions into the slots it implements.

// Callback modules and export-table ids.
const (
	moduleCore   = 1
	moduleCUDA   = 2
	moduleOpenCL = 3
	moduleCUDART = 4
	moduleCore2  = 5
	moduleSync   = 6
	numModules   = 7

	etidCallbacks   = 1
	etidVersionInfo = 3

	nvtxVersion = 3
)

// Core module slots.
const (
	cbMarkA         = 2
	cbRangeStartA   = 5
	cbRangeEnd      = 7
	cbRangePushA    = 9
	cbRangePop      = 11
	cbNameOsThreadA = 14
)

// moduleSizes are the modules' NVTX_CBID_*_SIZE: one more than their last callback id.
var moduleSizes = [numModules]int{moduleCore: 16, moduleCUDA: 9, moduleOpenCL: 15, moduleCUDART: 7, moduleCore2: 16, moduleSync: 7}

// The tables live in Go globals, which never move, for the tool to keep pointers into.
var (
	slots  [numModules][]uintptr // the function pointer slots the tool fills
	tables [numModules][]uintptr // per module: 0, pointers to slots 1..size-1, 0

	callbacksTable struct {
		size                   uintptr
		getModuleFunctionTable uintptr
	}
	versionTable struct {
		size                    uintptr
		version, reserved       uint32
		setInjectionNvtxVersion uintptr
	}
)

func getExportTable(id uint32) uintptr {
	switch id {
	case etidCallbacks:
		return uintptr(unsafe.Pointer(&callbacksTable))
	case etidVersionInfo:
		return uintptr(unsafe.Pointer(&versionTable))
	}
	return 0
}

func getModuleFunctionTable(module uint32, outTable *uintptr, outSize *uint32) int32 {
	if module == 0 || module >= numModules {
		return 0
	}
	if outSize != nil {
		*outSize = uint32(moduleSizes[module])
	}
	if outTable != nil {
		*outTable = uintptr(unsafe.Pointer(&tables[module][0]))
	}
	return 1
}

func setInjectionNvtxVersion(uint32) {}

// load loads the tool named by NVTX_INJECTION64_PATH, if any, and lets it fill the slots.
func load() {
	path := os.Getenv("NVTX_INJECTION64_PATH")
	if path == "" {
		return
	}
	lib, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		return
	}
	initFn, err := purego.Dlsym(lib, "InitializeInjectionNvtx2")
	if err != nil {
		return
	}
	for m := 1; m < numModules; m++ {
		n := moduleSizes[m]
		slots[m] = make([]uintptr, n)
		tables[m] = make([]uintptr, n+1)
		for i := 1; i < n; i++ {
			tables[m][i] = uintptr(unsafe.Pointer(&slots[m][i]))
		}
	}
	callbacksTable.size = unsafe.Sizeof(callbacksTable)
	callbacksTable.getModuleFunctionTable = purego.NewCallback(getModuleFunctionTable)
	versionTable.size = unsafe.Sizeof(versionTable)
	versionTable.version = nvtxVersion
	versionTable.setInjectionNvtxVersion = purego.NewCallback(setInjectionNvtxVersion)
	get := purego.NewCallback(getExportTable)
	r, _, _ := purego.SyscallN(initFn, get)
	if int32(r) == 0 {
		return // the tool declined
	}
	for _, cb := range []int{cbMarkA, cbRangeStartA, cbRangeEnd, cbRangePushA, cbRangePop, cbNameOsThreadA} {
		if slots[moduleCore][cb] != 0 {
			active.Store(true)
		}
	}
}

// call calls core slot cb with a NUL-terminated copy of s (and a leading word, when pre is
// set), if the tool filled it.
func callStr(cb int, s string, pre ...uintptr) uintptr {
	fn := slots[moduleCore][cb]
	if fn == 0 {
		return 0
	}
	b := make([]byte, len(s)+1)
	copy(b, s)
	args := append(pre, uintptr(unsafe.Pointer(&b[0])))
	r, _, _ := purego.SyscallN(fn, args...)
	runtime.KeepAlive(b)
	return r
}

// Push opens a range named name on the calling OS thread.
func Push(name string) {
	if active.Load() {
		callStr(cbRangePushA, name)
	}
}

// Pop closes the calling thread's innermost range.
func Pop() {
	if active.Load() {
		if fn := slots[moduleCore][cbRangePop]; fn != 0 {
			purego.SyscallN(fn)
		}
	}
}

// Mark records an instant named name.
func Mark(name string) {
	if Active() {
		callStr(cbMarkA, name)
	}
}

// Start opens a process range named name, which End closes from any thread; 0 without a tool.
func Start(name string) uint64 {
	if !Active() {
		return 0
	}
	return uint64(callStr(cbRangeStartA, name))
}

// End closes a range Start opened.
func End(id uint64) {
	if id == 0 || !active.Load() {
		return
	}
	if fn := slots[moduleCore][cbRangeEnd]; fn != 0 {
		purego.SyscallN(fn, uintptr(id))
	}
}

// NameThread names OS thread tid (a Linux thread id) in the tool's timeline.
func NameThread(tid int, name string) {
	if Active() {
		callStr(cbNameOsThreadA, name, uintptr(uint32(tid)))
	}
}

// NameCurrentThread names the calling OS thread (a device actor's locked thread).
func NameCurrentThread(name string) {
	if Active() {
		NameThread(syscall.Gettid(), name)
	}
}
