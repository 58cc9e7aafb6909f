package cudart

import (
	"runtime"
	"strings"
	"sync/atomic"
	"unsafe"

	"github.com/ebitengine/purego"
	"go.uber.org/zap"

	"github.com/gpuactor/gpuactor/internal/clib"
)

// NVRTC is a loaded libnvrtc: CUDA C++ source to PTX or cubin, no GPU needed. Its methods are
// safe for concurrent use.
type NVRTC struct {
	lib     openedLib
	log     *zap.Logger
	major   int
	fileVer int
	callVer atomic.Int64
	syms    symtab
}

func newNVRTC(lib openedLib, log *zap.Logger) *NVRTC {
	if log == nil {
		log = zap.NewNop()
	}
	n := &NVRTC{lib: lib, log: log}
	n.syms = newSymtab(nvrtcSymNames[:], n.dlsym)
	n.fileVer = versionFromNames(lib.file, lib.name)
	n.major = majorFromName(lib.name)
	if n.major == 0 {
		n.major = majorFromName(lib.file)
	}
	if n.major == 0 {
		if maj, _, err := n.Version(); err == nil {
			n.major = maj
		}
	}
	return n
}

func (n *NVRTC) dlsym(name string) (uintptr, error) {
	p, err := dlsym(n.lib.handle, name)
	if err != nil || p == 0 {
		v := int(n.callVer.Load())
		if v == 0 {
			v = n.fileVer
		}
		return 0, &SymbolError{Symbol: name, Library: n.Path(), Version: v}
	}
	return p, nil
}

// Path is the file loaded (symlinks resolved), or the soname when the file is unknown.
func (n *NVRTC) Path() string {
	if n.lib.file != "" {
		return n.lib.file
	}
	return n.lib.name
}

// Major is NVRTC's major version.
func (n *NVRTC) Major() int { return n.major }

// rawCall invokes NVRTC symbol id; the error is only for a missing symbol.
//
//go:uintptrescapes
func (n *NVRTC) rawCall(id int, args ...uintptr) (NVRTCResult, error) {
	fn, err := n.syms.get(id)
	if err != nil {
		return 0, err
	}
	ret, _, _ := purego.SyscallN(fn, args...)
	return NVRTCResult(int32(ret)), nil
}

// call invokes NVRTC symbol id and maps its nvrtcResult to an *NVRTCError.
//
//go:uintptrescapes
func (n *NVRTC) call(id int, args ...uintptr) error {
	code, err := n.rawCall(id, args...)
	if err != nil || code == NVRTCSuccess {
		return err
	}
	return n.newError(nvrtcSymNames[id], code)
}

func (n *NVRTC) newError(op string, code NVRTCResult) error {
	return &NVRTCError{Op: op, Code: code, Message: n.ErrorString(code)}
}

// ErrorString is nvrtcGetErrorString's text for code, e.g. "NVRTC_ERROR_COMPILATION".
func (n *NVRTC) ErrorString(code NVRTCResult) string {
	fn, err := n.syms.get(nvGetErrorString)
	if err != nil {
		return code.Name()
	}
	p, _, _ := purego.SyscallN(fn, uintptr(uint32(code)))
	if s := clib.GoString(p); s != "" {
		return s
	}
	return code.Name()
}

// Version is NVRTC's version (nvrtcVersion).
func (n *NVRTC) Version() (major, minor int, err error) {
	var maj, mnr int32
	if err := n.call(nvVersion, uintptr(unsafe.Pointer(&maj)), uintptr(unsafe.Pointer(&mnr))); err != nil {
		return 0, 0, err
	}
	n.callVer.Store(int64(maj)*1000 + int64(mnr)*10)
	return int(maj), int(mnr), nil
}

// SupportedArchs lists the compute capabilities NVRTC can target, e.g. 50 … 90 for 11.8.
func (n *NVRTC) SupportedArchs() ([]int, error) {
	var count int32
	if err := n.call(nvGetNumSupportedArchs, uintptr(unsafe.Pointer(&count))); err != nil {
		return nil, err
	}
	if count <= 0 {
		return nil, nil
	}
	archs := make([]int32, count)
	if err := n.call(nvGetSupportedArchs, uintptr(unsafe.Pointer(&archs[0]))); err != nil {
		return nil, err
	}
	out := make([]int, count)
	for i, a := range archs {
		out[i] = int(a)
	}
	return out, nil
}

// Program is a compiled program.
type Program struct {
	Name  string
	PTX   []byte // the PTX text, without a trailing NUL
	Cubin []byte // the cubin; empty when compiled for a virtual architecture (compute_XX)
	Log   string // NVRTC's log (warnings), possibly empty
}

// Compile compiles CUDA C++ source src, named name in messages ("kernel.cu" when empty), with
// NVRTC options such as "--gpu-architecture=sm_90" (cubin and PTX) or "-arch=compute_80" (PTX
// only). Kernels to be looked up by name should be extern "C". A program NVRTC rejects gives a
// *CompileError carrying the full log; other failures give an *NVRTCError.
func (n *NVRTC) Compile(src, name string, options []string) (*Program, error) {
	if name == "" {
		name = "kernel.cu"
	}
	var prog uintptr
	if err := n.call(nvCreateProgram, uintptr(unsafe.Pointer(&prog)),
		uintptr(unsafe.Pointer(cstr(src))), uintptr(unsafe.Pointer(cstr(name))), 0, 0, 0); err != nil {
		return nil, err
	}
	defer n.call(nvDestroyProgram, uintptr(unsafe.Pointer(&prog))) //nolint:errcheck // nothing to do about it

	opts := make([]*byte, len(options))
	for i, o := range options {
		opts[i] = cstr(o)
	}
	code, err := n.rawCall(nvCompileProgram, prog, uintptr(len(opts)), uintptr(unsafe.Pointer(unsafe.SliceData(opts))))
	runtime.KeepAlive(opts)
	if err != nil {
		return nil, err
	}
	log, _ := n.programLog(prog)
	if code != NVRTCSuccess {
		return nil, &CompileError{Name: name, Code: code, Log: log}
	}
	p := &Program{Name: name, Log: log}
	if p.Cubin, err = n.output(prog, nvGetCUBINSize, nvGetCUBIN); err != nil {
		return nil, err
	}
	if p.PTX, err = n.output(prog, nvGetPTXSize, nvGetPTX); err != nil {
		if len(p.Cubin) == 0 {
			return nil, err
		}
		p.PTX = nil // some targets keep no PTX; the cubin is what matters then
	}
	if k := len(p.PTX); k > 0 && p.PTX[k-1] == 0 {
		p.PTX = p.PTX[:k-1]
	}
	return p, nil
}

// output fetches one compiled artifact through its size and copy functions.
func (n *NVRTC) output(prog uintptr, sizeFn, getFn int) ([]byte, error) {
	var size uintptr
	if err := n.call(sizeFn, prog, uintptr(unsafe.Pointer(&size))); err != nil {
		return nil, err
	}
	if size == 0 {
		return nil, nil
	}
	buf := make([]byte, size)
	if err := n.call(getFn, prog, uintptr(unsafe.Pointer(&buf[0]))); err != nil {
		return nil, err
	}
	return buf, nil
}

// programLog is the program's log without its NUL.
func (n *NVRTC) programLog(prog uintptr) (string, error) {
	b, err := n.output(prog, nvGetProgramLogSize, nvGetProgramLog)
	if err != nil {
		return "", err
	}
	return strings.TrimRight(cbytes(b), "\n"), nil
}
