package cudart

import (
	"sync"

	"github.com/ebitengine/purego"
)

// callFrame holds the argument words of one call. purego.SyscallN copies its variadic arguments
// out of a slice that, being marked uintptrescapes, the compiler allocates on the heap for each
// call written as SyscallN(fn, a, b, c); passing an existing heap slice instead
// (SyscallN(fn, f[:n]...)) allocates nothing. The hot calls (queries, records, async copies and
// launches) therefore fill a frame: the device adapter owns one per device thread, direct
// Runtime callers borrow one from a pool.
//
// A frame holds plain words, so it does not keep Go memory alive or in place: the functions
// that put Go pointers in one are uintptrescapes and take them as converted arguments.
type callFrame [12]uintptr // cuLaunchKernel, the longest, takes 11

var framePool = sync.Pool{New: func() any { return new(callFrame) }}

func getFrame() *callFrame  { return framePool.Get().(*callFrame) }
func putFrame(f *callFrame) { framePool.Put(f) }

// invoke calls libcudart symbol id with the first n words of f and returns its cudaError_t; the
// error is only for a missing symbol.
func (r *Runtime) invoke(id int, f *callFrame, n int) (int32, error) {
	fn, err := r.syms.get(id)
	if err != nil {
		return 0, err
	}
	ret, _, _ := purego.SyscallN(fn, f[:n]...)
	return int32(ret), nil
}

// invokeErr is invoke with the cudaError_t mapped to an error.
func (r *Runtime) invokeErr(id int, f *callFrame, n int) error {
	code, err := r.invoke(id, f, n)
	if code == 0 {
		return err
	}
	return r.newError(runtimeSymNames[id], code)
}

// invokeDriver calls driver function id with the first n words of f and maps its CUresult.
func (r *Runtime) invokeDriver(id int, f *callFrame, n int) error {
	fn, err := r.drv.get(id)
	if err != nil {
		return err
	}
	ret, _, _ := purego.SyscallN(fn, f[:n]...)
	if int32(ret) == 0 {
		return nil
	}
	return r.driverError(driverSymNames[id], int32(ret))
}

// The hot calls, on a caller-provided frame.

func (r *Runtime) streamQuery(f *callFrame, s Stream) error {
	f[0] = uintptr(s)
	code, err := r.invoke(fnStreamQuery, f, 1)
	switch {
	case code == 0:
		return err
	case code == codeNotReady:
		return r.notReadyStream
	}
	return r.newError(runtimeSymNames[fnStreamQuery], code)
}

func (r *Runtime) eventQuery(f *callFrame, e Event) error {
	f[0] = uintptr(e)
	code, err := r.invoke(fnEventQuery, f, 1)
	switch {
	case code == 0:
		return err
	case code == codeNotReady:
		return r.notReadyEvent
	}
	return r.newError(runtimeSymNames[fnEventQuery], code)
}

func (r *Runtime) eventRecord(f *callFrame, e Event, s Stream) error {
	f[0], f[1] = uintptr(e), uintptr(s)
	return r.invokeErr(fnEventRecord, f, 2)
}

func (r *Runtime) streamWaitEvent(f *callFrame, s Stream, e Event) error {
	f[0], f[1], f[2] = uintptr(s), uintptr(e), 0
	return r.invokeErr(fnStreamWaitEvent, f, 3)
}

func (r *Runtime) memsetAsync(f *callFrame, p DevicePtr, value byte, n uint64, s Stream) error {
	f[0], f[1], f[2], f[3] = uintptr(p), uintptr(value), uintptr(n), uintptr(s)
	return r.invokeErr(fnMemsetAsync, f, 4)
}

//go:uintptrescapes
func (r *Runtime) memcpyAsync(f *callFrame, dst, src uintptr, n uint64, kind MemcpyKind, s Stream) error {
	f[0], f[1], f[2], f[3], f[4] = dst, src, uintptr(n), uintptr(kind), uintptr(s)
	return r.invokeErr(fnMemcpyAsync, f, 5)
}

func (r *Runtime) streamSynchronize(f *callFrame, s Stream) error {
	f[0] = uintptr(s)
	return r.invokeErr(fnStreamSynchronize, f, 1)
}

func (r *Runtime) eventSynchronize(f *callFrame, e Event) error {
	f[0] = uintptr(e)
	return r.invokeErr(fnEventSynchronize, f, 1)
}
