package nccl

import (
	"runtime"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/gpuactor/gpuactor/internal/backend"
)

// Version is ncclGetVersion: e.g. 22803 for 2.28.3.
func (l *Lib) Version() (int, error) {
	var v int32
	r, err := l.call("ncclGetVersion", l.getVersion, uintptr(unsafe.Pointer(&v)))
	if err != nil {
		return 0, err
	}
	if err := l.result("ncclGetVersion", r, 0); err != nil {
		return 0, err
	}
	return int(v), nil
}

// UniqueID is ncclGetUniqueId.
func (l *Lib) UniqueID() (backend.CommID, error) {
	id := new(backend.CommID)
	r, err := l.call("ncclGetUniqueId", l.getUniqueID, uintptr(unsafe.Pointer(id)))
	if err != nil {
		return backend.CommID{}, err
	}
	return *id, l.result("ncclGetUniqueId", r, 0)
}

// CommInitRank is ncclCommInitRankConfig, or ncclCommInitRank (blocking, without cfg) on a
// library before 2.14. The comm is returned with ErrCollInProgress while a non-blocking
// init goes on.
func (l *Lib) CommInitRank(nranks int, id backend.CommID, rank int, cfg *Config) (backend.Comm, error) {
	comm := new(backend.Comm)
	name, fn := "ncclCommInitRankConfig", l.commInitRankConfig
	if fn == 0 {
		name, fn, cfg = "ncclCommInitRank", l.commInitRank, nil
	}
	if fn == 0 {
		return 0, &backend.CollError{Code: backend.CollInvalidUsage, Call: "ncclCommInitRank", Detail: errNoSymbol.Error()}
	}
	r := initRank(fn, comm, nranks, &id, rank, cfg)
	runtime.KeepAlive(cfg)
	return *comm, l.result(name, r, *comm)
}

// CommSplit is ncclCommSplit. NCCL writes the new comm to *out (0 for a rank of
// SplitNoColor) when the split is done: at once for a blocking parent, and from its own
// thread, after this returns ErrCollInProgress, for a non-blocking one, so out must stay
// allocated (and be read atomically) until c's CommAsyncError no longer reports
// ErrCollInProgress.
func (l *Lib) CommSplit(c backend.Comm, color, key int, out *backend.Comm, cfg *Config) error {
	r, err := l.call("ncclCommSplit", l.commSplit, uintptr(c), uintptr(int32(color)), uintptr(int32(key)),
		uintptr(unsafe.Pointer(out)), uintptr(unsafe.Pointer(cfg)))
	if err != nil {
		return err
	}
	return l.result("ncclCommSplit", r, c)
}

// CommAsyncError is ncclCommGetAsyncError: nil, ErrCollInProgress or a *CollError.
func (l *Lib) CommAsyncError(c backend.Comm) error {
	var res int32
	r, err := l.call("ncclCommGetAsyncError", l.commGetAsyncError, uintptr(c), uintptr(unsafe.Pointer(&res)))
	if err != nil {
		return err
	}
	if err := l.result("ncclCommGetAsyncError", r, c); err != nil {
		return err
	}
	return l.result("ncclCommGetAsyncError", uintptr(uint32(res)), c)
}

// commInt calls one of ncclCommCount, ncclCommCuDevice, ncclCommUserRank.
func (l *Lib) commInt(name string, fn uintptr, c backend.Comm) (int, error) {
	var v int32
	r, err := l.call(name, fn, uintptr(c), uintptr(unsafe.Pointer(&v)))
	if err != nil {
		return 0, err
	}
	return int(v), l.result(name, r, c)
}

// CommCount is ncclCommCount.
func (l *Lib) CommCount(c backend.Comm) (int, error) {
	return l.commInt("ncclCommCount", l.commCount, c)
}

// CommCuDevice is ncclCommCuDevice.
func (l *Lib) CommCuDevice(c backend.Comm) (int, error) {
	return l.commInt("ncclCommCuDevice", l.commCuDevice, c)
}

// CommUserRank is ncclCommUserRank.
func (l *Lib) CommUserRank(c backend.Comm) (int, error) {
	return l.commInt("ncclCommUserRank", l.commUserRank, c)
}

// commCall calls one of ncclCommFinalize, ncclCommDestroy, ncclCommAbort.
func (l *Lib) commCall(name string, fn uintptr, c backend.Comm) error {
	r, err := l.call(name, fn, uintptr(c))
	if err != nil {
		return err
	}
	return l.result(name, r, c)
}

// CommFinalize is ncclCommFinalize.
func (l *Lib) CommFinalize(c backend.Comm) error {
	return l.commCall("ncclCommFinalize", l.commFinalize, c)
}

// CommDestroy is ncclCommDestroy. NCCL frees the comm whatever it returns; the last-error
// text is not asked for, since the comm is gone.
func (l *Lib) CommDestroy(c backend.Comm) error {
	r, err := l.call("ncclCommDestroy", l.commDestroy, uintptr(c))
	if err != nil {
		return err
	}
	return l.result("ncclCommDestroy", r, 0)
}

// CommAbort is ncclCommAbort; like CommDestroy, the comm is gone after it.
func (l *Lib) CommAbort(c backend.Comm) error {
	r, err := l.call("ncclCommAbort", l.commAbort, uintptr(c))
	if err != nil {
		return err
	}
	return l.result("ncclCommAbort", r, 0)
}

// GroupStart is ncclGroupStart, for the calling thread.
func (l *Lib) GroupStart() error {
	r, err := l.call("ncclGroupStart", l.groupStart)
	if err != nil {
		return err
	}
	return l.result("ncclGroupStart", r, 0)
}

// GroupEnd is ncclGroupEnd, for the calling thread; c names the comm whose last error
// explains a failure.
func (l *Lib) GroupEnd(c backend.Comm) error {
	r, err := l.call("ncclGroupEnd", l.groupEnd)
	if err != nil {
		return err
	}
	return l.result("ncclGroupEnd", r, c)
}

// Op issues one operation on c and stream s.
func (l *Lib) Op(c backend.Comm, s backend.Stream, op backend.CollOp) error {
	var (
		name string
		fn   uintptr
		args []uintptr
	)
	send, recv, n, t := uintptr(op.Send), uintptr(op.Recv), uintptr(op.Count), uintptr(uint32(op.Type))
	red, peer := uintptr(uint32(op.Op)), uintptr(uint32(op.Peer))
	cc, ss := uintptr(c), uintptr(s)
	switch op.Kind {
	case backend.CollAllReduce:
		name, fn, args = "ncclAllReduce", l.allReduce, []uintptr{send, recv, n, t, red, cc, ss}
	case backend.CollBroadcast:
		name, fn, args = "ncclBroadcast", l.broadcast, []uintptr{send, recv, n, t, peer, cc, ss}
	case backend.CollReduce:
		name, fn, args = "ncclReduce", l.reduce, []uintptr{send, recv, n, t, red, peer, cc, ss}
	case backend.CollAllGather:
		name, fn, args = "ncclAllGather", l.allGather, []uintptr{send, recv, n, t, cc, ss}
	case backend.CollReduceScatter:
		name, fn, args = "ncclReduceScatter", l.reduceScatter, []uintptr{send, recv, n, t, red, cc, ss}
	case backend.CollSend:
		name, fn, args = "ncclSend", l.send, []uintptr{send, n, t, peer, cc, ss}
	case backend.CollRecv:
		name, fn, args = "ncclRecv", l.recv, []uintptr{recv, n, t, peer, cc, ss}
	default:
		return &backend.CollError{Code: backend.CollInvalidArgument, Call: "CollLaunch", Detail: "unknown operation kind"}
	}
	if fn == 0 {
		return &backend.CollError{Code: backend.CollInvalidUsage, Call: name, Detail: errNoSymbol.Error()}
	}
	r, _, _ := purego.SyscallN(fn, args...)
	return l.result(name, r, c)
}
