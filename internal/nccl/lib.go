package nccl

import (
	"sync"

	"github.com/ebitengine/purego"

	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/clib"
)

// Lib is a loaded libnccl: the addresses of the functions this package calls (0 for one the
// library lacks).
type Lib struct {
	path string // what was dlopened
	step string // the search step that found it

	getVersion, getUniqueID               uintptr
	commInitRankConfig, commInitRank      uintptr
	commSplit, commGetAsyncError          uintptr
	commCount, commCuDevice, commUserRank uintptr
	commFinalize, commDestroy, commAbort  uintptr
	getErrorString, getLastError          uintptr
	groupStart, groupEnd                  uintptr
	allReduce, broadcast, reduce          uintptr
	allGather, reduceScatter, send, recv  uintptr
}

// The process's libnccl: only a success is kept, so a failed Load searches again next time
// (after the user installed the library or set GPUACTOR_NCCL, say).
var loaded struct {
	mu  sync.Mutex
	lib *Lib
}

// Load returns the process's libnccl, loading it on the first successful call. The search
// stops at the first library that loads:
//
//  1. $GPUACTOR_NCCL, a file or a directory holding one: strict, nothing else is tried when
//     it is set;
//  2. a libnccl.so.2 or libnccl.so already in the process (a framework's);
//  3. pip wheels: nvidia/nccl/lib under $VIRTUAL_ENV/lib/python3*/site-packages, each
//     $PYTHONPATH entry, ~/.local/lib/python3*/site-packages, /usr/local/lib/python3*/
//     dist-packages and site-packages, /usr/lib/python3/dist-packages and
//     /usr/lib/python3*/site-packages (newest Python first);
//  4. $CONDA_PREFIX/lib;
//  5. the sonames libnccl.so.2 and libnccl.so through the dynamic loader (ld.so.cache,
//     LD_LIBRARY_PATH).
//
// When nothing loads the error is a *LoadError listing every path tried, which matches
// backend.ErrCollUnavailable.
func Load() (*Lib, error) {
	loaded.mu.Lock()
	defer loaded.mu.Unlock()
	if loaded.lib != nil {
		return loaded.lib, nil
	}
	f, err := search(osFS())
	if err != nil {
		return nil, err
	}
	loaded.lib = bind(f)
	return loaded.lib, nil
}

// bind resolves the symbols of an opened library.
func bind(f found) *Lib {
	l := &Lib{path: f.path, step: f.step}
	for _, s := range []struct {
		name string
		p    *uintptr
	}{
		// libnccl's exports this package calls.
		{"ncclGetVersion", &l.getVersion},
		{"ncclGetUniqueId", &l.getUniqueID},
		{"ncclCommInitRankConfig", &l.commInitRankConfig}, // 2.14+
		{"ncclCommInitRank", &l.commInitRank},
		{"ncclCommSplit", &l.commSplit}, // 2.18+
		{"ncclCommGetAsyncError", &l.commGetAsyncError},
		{"ncclCommCount", &l.commCount},
		{"ncclCommCuDevice", &l.commCuDevice},
		{"ncclCommUserRank", &l.commUserRank},
		{"ncclCommFinalize", &l.commFinalize}, // 2.14+
		{"ncclCommDestroy", &l.commDestroy},
		{"ncclCommAbort", &l.commAbort},
		{"ncclGetErrorString", &l.getErrorString},
		{"ncclGetLastError", &l.getLastError}, // 2.13+
		{"ncclGroupStart", &l.groupStart},
		{"ncclGroupEnd", &l.groupEnd},
		{"ncclAllReduce", &l.allReduce},
		{"ncclBroadcast", &l.broadcast},
		{"ncclReduce", &l.reduce},
		{"ncclAllGather", &l.allGather},
		{"ncclReduceScatter", &l.reduceScatter},
		{"ncclSend", &l.send},
		{"ncclRecv", &l.recv},
	} {
		*s.p, _ = dlsym(f.handle, s.name)
	}
	return l
}

// Path is the library's file (or soname) as it was opened, and Step the search step that
// found it.
func (l *Lib) Path() string { return l.path }

// Step is the search step that found the library ("pip wheel", "soname", …).
func (l *Lib) Step() string { return l.step }

// call calls fn, or reports that the library lacks it. Its callers convert pointers to
// uintptr in the call expression: uintptrescapes keeps what they point to on the heap and
// alive until call returns, as purego.SyscallN's own directive does for its arguments (a
// stack that grew before the C call would otherwise leave the words pointing at the old
// stack).
//
//go:uintptrescapes
func (l *Lib) call(name string, fn uintptr, args ...uintptr) (uintptr, error) {
	if fn == 0 {
		return 0, &backend.CollError{Code: backend.CollInvalidUsage, Call: name, Detail: errNoSymbol.Error()}
	}
	r, _, _ := purego.SyscallN(fn, args...)
	return r, nil
}

// result turns an ncclResult_t of call into an error, with the library's last-error text for
// comm (0: the thread's last error).
func (l *Lib) result(call string, r uintptr, comm backend.Comm) error {
	switch code := int32(r); code {
	case 0:
		return nil
	case resultInProgress:
		return backend.ErrCollInProgress
	default:
		return &backend.CollError{Code: code, Call: call, Detail: l.lastError(comm)}
	}
}

// ncclInProgress.
const resultInProgress = 7

// lastError is ncclGetLastError(comm), "" when the library has none or lacks the call.
func (l *Lib) lastError(comm backend.Comm) string {
	if l.getLastError == 0 {
		return ""
	}
	r, _, _ := purego.SyscallN(l.getLastError, uintptr(comm))
	return clib.GoString(r)
}

// ErrorString is ncclGetErrorString(code): NCCL's name for a result.
func (l *Lib) ErrorString(code int32) string {
	if l.getErrorString == 0 {
		return ""
	}
	r, _, _ := purego.SyscallN(l.getErrorString, uintptr(code))
	return clib.GoString(r)
}
