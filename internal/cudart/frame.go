package cudart

import (
	"sync"
)

// callFrame is one call for ffiCall: the function, its argument words and its result. The hot
// calls (queries, records, async copies and launches) fill a frame instead of calling
// purego.SyscallN, which allocates a variadic slice per call written as SyscallN(fn, a, b, c)
// and copies its arguments several times (see ffi_amd64.go): the device adapter owns one frame
// per device thread, direct Runtime callers borrow one from a pool. Words past a call's own
// arguments may hold stale values; the callee never reads them.
//
// A frame holds plain words, so it does not keep Go memory alive or in place: the functions
// that put Go pointers in one are uintptrescapes and take them as converted arguments.
type callFrame struct {
	fn  uintptr
	w   [12]uintptr // the argument words; cuLaunchKernel, the longest, takes 11
	ret uintptr
}

var framePool = sync.Pool{New: func() any { return new(callFrame) }}

func getFrame() *callFrame  { return framePool.Get().(*callFrame) }
func putFrame(f *callFrame) { framePool.Put(f) }

// invoke calls libcudart symbol id with the argument words of f and returns its cudaError_t; the
// error is only for a missing symbol.
func (r *Runtime) invoke(id int, f *callFrame) (int32, error) {
	fn, err := r.syms.get(id)
	if err != nil {
		return 0, err
	}
	f.fn = fn
	return int32(ffiCall(f)), nil
}

// invokeErr is invoke with the cudaError_t mapped to an error.
func (r *Runtime) invokeErr(id int, f *callFrame) error {
	code, err := r.invoke(id, f)
	if code == 0 {
		return err
	}
	return r.newError(runtimeSymNames[id], code)
}

// invokeDriver calls driver function id with the argument words of f and maps its CUresult.
func (r *Runtime) invokeDriver(id int, f *callFrame) error {
	fn, err := r.drv.get(id)
	if err != nil {
		return err
	}
	f.fn = fn
	ret := ffiCall(f)
	if int32(ret) == 0 {
		return nil
	}
	return r.driverError(driverSymNames[id], int32(ret))
}

// The hot calls, on a caller-provided frame.

func (r *Runtime) streamQuery(f *callFrame, s Stream) error {
	f.w[0] = uintptr(s)
	code, err := r.invoke(fnStreamQuery, f)
	switch {
	case code == 0:
		return err
	case code == codeNotReady:
		return r.notReadyStream
	}
	return r.newError(runtimeSymNames[fnStreamQuery], code)
}

func (r *Runtime) eventQuery(f *callFrame, e Event) error {
	f.w[0] = uintptr(e)
	code, err := r.invoke(fnEventQuery, f)
	switch {
	case code == 0:
		return err
	case code == codeNotReady:
		return r.notReadyEvent
	}
	return r.newError(runtimeSymNames[fnEventQuery], code)
}

func (r *Runtime) eventRecord(f *callFrame, e Event, s Stream) error {
	f.w[0], f.w[1] = uintptr(e), uintptr(s)
	return r.invokeErr(fnEventRecord, f)
}

func (r *Runtime) streamWaitEvent(f *callFrame, s Stream, e Event) error {
	f.w[0], f.w[1], f.w[2] = uintptr(s), uintptr(e), 0
	return r.invokeErr(fnStreamWaitEvent, f)
}

func (r *Runtime) memsetAsync(f *callFrame, p DevicePtr, value byte, n uint64, s Stream) error {
	f.w[0], f.w[1], f.w[2], f.w[3] = uintptr(p), uintptr(value), uintptr(n), uintptr(s)
	return r.invokeErr(fnMemsetAsync, f)
}

//go:uintptrescapes
func (r *Runtime) memcpyAsync(f *callFrame, dst, src uintptr, n uint64, kind MemcpyKind, s Stream) error {
	f.w[0], f.w[1], f.w[2], f.w[3], f.w[4] = dst, src, uintptr(n), uintptr(kind), uintptr(s)
	return r.invokeErr(fnMemcpyAsync, f)
}

func (r *Runtime) streamSynchronize(f *callFrame, s Stream) error {
	f.w[0] = uintptr(s)
	return r.invokeErr(fnStreamSynchronize, f)
}

func (r *Runtime) eventSynchronize(f *callFrame, e Event) error {
	f.w[0] = uintptr(e)
	return r.invokeErr(fnEventSynchronize, f)
}
