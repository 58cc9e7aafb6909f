package cudart

import (
	"sync"
	"sync/atomic"
	"unsafe"

	"go.uber.org/zap"

	"github.com/gpuactor/gpuactor/internal/backend"
)

// Runtime is a loaded libcudart. Its methods are safe for concurrent use; those acting on "the
// current device" act on the calling OS thread's (see the package documentation).
type Runtime struct {
	health  backend.HealthBook // each device's failure, for every Backend over this runtime
	lib     openedLib
	log     *zap.Logger
	major   int // from the file name, else the runtime, else the exported symbols
	fileVer int // CUDA-encoded version from the file name, 0 when it carries none

	syms symtab // libcudart
	drv  symtab // driver functions through cudaGetDriverEntryPoint

	callVer atomic.Int64 // cudaRuntimeGetVersion's answer once it succeeded

	msgMu sync.Mutex
	msgs  map[int32]string // cudaGetErrorString texts

	// Preallocated errors for the polls that fail with cudaErrorNotReady all the time.
	notReadyStream, notReadyEvent error
}

// newRuntime wraps a dlopened libcudart. It does not touch the process-wide cache, so tests can
// build one from a fresh search.
func newRuntime(lib openedLib, log *zap.Logger) *Runtime {
	if log == nil {
		log = zap.NewNop()
	}
	r := &Runtime{lib: lib, log: log, msgs: map[int32]string{}}
	r.syms = newSymtab(runtimeSymNames[:], r.dlsym)
	r.drv = newSymtab(driverSymNames[:], r.driverEntryPoint)
	r.fileVer = versionFromNames(lib.file, lib.name)
	r.major = majorFromName(lib.name)
	if r.major == 0 {
		r.major = majorFromName(lib.file)
	}
	if r.major == 0 {
		if v, err := r.RuntimeVersion(); err == nil && v > 0 {
			r.major = v / 1000
		} else {
			r.major = r.majorFromSymbols()
		}
	}
	r.notReadyStream = r.newError("cudaStreamQuery", codeNotReady)
	r.notReadyEvent = r.newError("cudaEventQuery", codeNotReady)
	r.log.Debug("cudart: runtime ready", zap.String("path", r.Path()), zap.Int("major", r.major),
		zap.Int("file_version", r.fileVer))
	return r
}

// dlsym resolves a libcudart export.
func (r *Runtime) dlsym(name string) (uintptr, error) {
	p, err := dlsym(r.lib.handle, name)
	if err != nil || p == 0 {
		return 0, &SymbolError{Symbol: name, Library: r.Path(), Version: r.versionHint()}
	}
	return p, nil
}

// lookup resolves any libcudart export by name (uncached; for probing and tests).
func (r *Runtime) lookup(name string) (uintptr, error) { return r.dlsym(name) }

// majorFromSymbols tells the major version from the exports when no name carries it: 13.0
// exports no _v2 names, 12.x exports cudaGetDeviceProperties_v2, 11.x lacks cudaInitDevice.
func (r *Runtime) majorFromSymbols() int {
	switch {
	case !r.syms.has(fnInitDevice):
		return 11
	case r.syms.has(fnGetDevicePropertiesV2):
		return 12
	default:
		return 13
	}
}

// Path is the file loaded (symlinks resolved), or the soname when the file is unknown.
func (r *Runtime) Path() string {
	if r.lib.file != "" {
		return r.lib.file
	}
	return r.lib.name
}

// Major is the runtime's major version (11, 12, 13), which picks signatures that changed.
func (r *Runtime) Major() int { return r.major }

// versionHint is the best version known without failing: the runtime's answer, else the file's.
func (r *Runtime) versionHint() int {
	if v := r.callVer.Load(); v > 0 {
		return int(v)
	}
	if r.fileVer > 0 {
		return r.fileVer
	}
	return r.major * 1000
}

// RuntimeVersion is the runtime's version in CUDA's encoding (11080 for 11.8).
// cudaRuntimeGetVersion fails on a machine without a usable driver; the version is then derived
// from the library's file name (libcudart.so.11.8.89 → 11080, or from the soname) and the error
// is only returned when no name carries a version either.
func (r *Runtime) RuntimeVersion() (int, error) {
	if v := r.callVer.Load(); v > 0 {
		return int(v), nil
	}
	var v int32
	err := r.call(fnRuntimeGetVersion, uintptr(unsafe.Pointer(&v)))
	if err == nil && v > 0 {
		r.callVer.Store(int64(v))
		return int(v), nil
	}
	if r.fileVer > 0 {
		return r.fileVer, nil
	}
	if r.major > 0 && err != nil {
		return r.major * 1000, nil
	}
	return 0, err
}

// DriverVersion is the latest CUDA version the installed driver supports (12020 for 12.2), 0
// when no driver is installed. A failing cudaDriverGetVersion gives 0 and its error.
func (r *Runtime) DriverVersion() (int, error) {
	var v int32
	if err := r.call(fnDriverGetVersion, uintptr(unsafe.Pointer(&v))); err != nil {
		return 0, err
	}
	return int(v), nil
}
