package cudart

import (
	"structs"
	"unsafe"

	"github.com/gpuactor/gpuactor/internal/backend"
)

// The descriptors of cudaImportExternalMemory and friends, passed by pointer. Their layouts
// are the same in every runtime from 11.2 to 13.0 (the semaphore parameter structs are the
// 11.2+ "_v2" ones, which 13.0 took as the plain names); external_test.go checks every size
// and offset against the C headers.

// externalMemoryHandleDesc is struct cudaExternalMemoryHandleDesc (104 bytes): the handle
// union is 16 bytes at offset 8 (two pointers on Windows; an int fd here).
type externalMemoryHandleDesc struct {
	_        structs.HostLayout
	kind     int32 // cudaExternalMemoryHandleType
	_        uint32
	fd       int32 // handle.fd: the union's first member
	_        [12]byte
	size     uint64
	flags    uint32
	reserved [16]uint32
	_        uint32 // trailing padding to 8-byte alignment
}

// externalMemoryBufferDesc is struct cudaExternalMemoryBufferDesc (88 bytes).
type externalMemoryBufferDesc struct {
	_        structs.HostLayout
	offset   uint64
	size     uint64
	flags    uint32
	reserved [16]uint32
	_        uint32
}

// externalMemoryMipmappedArrayDesc is struct cudaExternalMemoryMipmappedArrayDesc (128
// bytes): the channel format is 20 bytes at offset 8, and the extent starts at the next
// 8-byte boundary.
type externalMemoryMipmappedArrayDesc struct {
	_         structs.HostLayout
	offset    uint64
	format    backend.ChannelFormat
	_         uint32
	extent    backend.Extent3D
	flags     uint32
	numLevels uint32
	reserved  [16]uint32
}

// externalSemaphoreHandleDesc is struct cudaExternalSemaphoreHandleDesc (96 bytes).
type externalSemaphoreHandleDesc struct {
	_        structs.HostLayout
	kind     int32 // cudaExternalSemaphoreHandleType
	_        uint32
	fd       int32
	_        [12]byte
	flags    uint32
	reserved [16]uint32
	_        uint32
}

// externalSemaphoreParams is struct cudaExternalSemaphoreSignalParams and struct
// cudaExternalSemaphoreWaitParams alike (144 bytes): both start with the fence value, and
// everything else (NvSciSync fences, keyed-mutex keys and timeouts) is zero for the fd
// semaphores gpuactor imports.
type externalSemaphoreParams struct {
	_          structs.HostLayout
	fenceValue uint64
	nvSciSync  uint64
	keyedMutex [2]uint64 // signal: key, then the first 8 of its reserved bytes; wait: key, timeoutMs, padding
	reserved   [10]uint32
	flags      uint32
	reserved2  [16]uint32
	_          uint32
}

// externalMemoryHandleTypeOpaqueFd is cudaExternalMemoryHandleTypeOpaqueFd.
const externalMemoryHandleTypeOpaqueFd = 1

// ImportExternalMemoryFD imports memory exported as an opaque file descriptor
// (cudaImportExternalMemory); the runtime owns fd once this succeeds.
func (r *Runtime) ImportExternalMemoryFD(fd int, size uint64, flags uint32) (backend.ExternalMemory, error) {
	desc := externalMemoryHandleDesc{kind: externalMemoryHandleTypeOpaqueFd, fd: int32(fd), size: size, flags: flags}
	var m uintptr
	err := r.call(fnImportExternalMemory, uintptr(unsafe.Pointer(&m)), uintptr(unsafe.Pointer(&desc)))
	return backend.ExternalMemory(m), err
}

// ExternalMemoryGetMappedBuffer maps part of m (cudaExternalMemoryGetMappedBuffer).
func (r *Runtime) ExternalMemoryGetMappedBuffer(m backend.ExternalMemory, offset, size uint64) (DevicePtr, error) {
	desc := externalMemoryBufferDesc{offset: offset, size: size}
	var p DevicePtr
	err := r.call(fnExternalMemoryGetMappedBuffer, uintptr(unsafe.Pointer(&p)), uintptr(m), uintptr(unsafe.Pointer(&desc)))
	return p, err
}

// ExternalMemoryGetMappedMipmappedArray maps a mipmapped array over part of m
// (cudaExternalMemoryGetMappedMipmappedArray).
func (r *Runtime) ExternalMemoryGetMappedMipmappedArray(m backend.ExternalMemory, offset uint64, f backend.ChannelFormat, e backend.Extent3D, levels, flags uint32) (backend.MipmappedArray, error) {
	desc := externalMemoryMipmappedArrayDesc{offset: offset, format: f, extent: e, flags: flags, numLevels: levels}
	var a uintptr
	err := r.call(fnExternalMemoryGetMappedMipmappedArray, uintptr(unsafe.Pointer(&a)), uintptr(m), uintptr(unsafe.Pointer(&desc)))
	return backend.MipmappedArray(a), err
}

// DestroyExternalMemory destroys m (cudaDestroyExternalMemory).
func (r *Runtime) DestroyExternalMemory(m backend.ExternalMemory) error {
	return r.call(fnDestroyExternalMemory, uintptr(m))
}

// ImportExternalSemaphoreFD imports a semaphore exported as a file descriptor
// (cudaImportExternalSemaphore); the runtime owns fd once this succeeds.
func (r *Runtime) ImportExternalSemaphoreFD(fd int, kind backend.ExternalSemaphoreKind) (backend.ExternalSemaphore, error) {
	desc := externalSemaphoreHandleDesc{kind: int32(kind), fd: int32(fd)}
	var s uintptr
	err := r.call(fnImportExternalSemaphore, uintptr(unsafe.Pointer(&s)), uintptr(unsafe.Pointer(&desc)))
	return backend.ExternalSemaphore(s), err
}

// SignalExternalSemaphore queues a signal of sem on s (cudaSignalExternalSemaphoresAsync:
// the _v2 symbol before 13.0, whose plain name has the 11.x signature there).
func (r *Runtime) SignalExternalSemaphore(sem backend.ExternalSemaphore, value uint64, s Stream) error {
	fn := fnSignalExternalSemaphoresAsync
	if r.major < 13 {
		fn = fnSignalExternalSemaphoresAsyncV2
	}
	params := externalSemaphoreParams{fenceValue: value}
	return r.call(fn, uintptr(unsafe.Pointer(&sem)), uintptr(unsafe.Pointer(&params)), 1, uintptr(s))
}

// WaitExternalSemaphore makes s wait for sem (cudaWaitExternalSemaphoresAsync, versioned as
// SignalExternalSemaphore).
func (r *Runtime) WaitExternalSemaphore(sem backend.ExternalSemaphore, value uint64, s Stream) error {
	fn := fnWaitExternalSemaphoresAsync
	if r.major < 13 {
		fn = fnWaitExternalSemaphoresAsyncV2
	}
	params := externalSemaphoreParams{fenceValue: value}
	return r.call(fn, uintptr(unsafe.Pointer(&sem)), uintptr(unsafe.Pointer(&params)), 1, uintptr(s))
}

// DestroyExternalSemaphore destroys sem (cudaDestroyExternalSemaphore).
func (r *Runtime) DestroyExternalSemaphore(sem backend.ExternalSemaphore) error {
	return r.call(fnDestroyExternalSemaphore, uintptr(sem))
}

// StreamGetDevice is the device s belongs to (cudaStreamGetDevice, 12.8+).
func (r *Runtime) StreamGetDevice(s Stream) (int, error) {
	var dev int32
	err := r.call(fnStreamGetDevice, uintptr(s), uintptr(unsafe.Pointer(&dev)))
	return int(dev), err
}

// StreamGetFlags is s's creation flags (cudaStreamGetFlags).
func (r *Runtime) StreamGetFlags(s Stream) (uint32, error) {
	var f uint32
	err := r.call(fnStreamGetFlags, uintptr(s), uintptr(unsafe.Pointer(&f)))
	return f, err
}

// StreamGetPriority is s's priority (cudaStreamGetPriority).
func (r *Runtime) StreamGetPriority(s Stream) (int, error) {
	var p int32
	err := r.call(fnStreamGetPriority, uintptr(s), uintptr(unsafe.Pointer(&p)))
	return int(p), err
}
