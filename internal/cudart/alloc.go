package cudart

import (
	"structs"
	"unsafe"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// memPoolProps is cudaMemPoolProps: 88 bytes in every runtime; maxSize is honoured from 12.2
// (reserved bytes before, which must stay zero) and usage from 12.6.
type memPoolProps struct {
	_           structs.HostLayout
	allocType   int32   // cudaMemAllocationTypePinned = 1
	handleTypes int32   // cudaMemAllocationHandleType flags
	locType     int32   // cudaMemLocation.type
	locID       int32   // cudaMemLocation.id
	win32       uintptr // win32SecurityAttributes
	maxSize     uint64
	usage       uint16
	reserved    [54]byte
}

// memAccessDesc is cudaMemAccessDesc: a cudaMemLocation and the access flags, 12 bytes.
type memAccessDesc struct {
	_       structs.HostLayout
	locType int32
	locID   int32
	flags   int32
}

// pointerAttributes is cudaPointerAttributes: 24 bytes before 13.0, 88 from 13.0; always
// passed with room for 88 so either runtime writes inside it.
type pointerAttributes struct {
	_             structs.HostLayout
	memType       int32
	device        int32
	devicePointer uintptr
	hostPointer   uintptr
	reserved      [8]int64
}

const (
	allocTypePinned  = 1
	codeNotSupported = int32(cudaerr.NotSupported)
)

// locationWord packs a cudaMemLocation passed by value: an 8-byte struct of two ints is one
// INTEGER eightbyte on SysV amd64, type in the low half, id in the high half.
func locationWord(loc backend.Location) uintptr {
	return uintptr(uint64(uint32(loc.Type)) | uint64(uint32(loc.ID))<<32)
}

// legacyDevice is the int device argument of the pre-13.0 managed-memory calls.
func legacyDevice(loc backend.Location) uintptr {
	id := int64(loc.ID)
	if loc.Type == backend.LocationHost {
		id = backend.CPUDevice
	}
	return uintptr(id)
}

// outWord is where the hot allocation calls have the runtime write their pointer: the frame's
// last word, which they do not use for arguments. It lives with the frame (never on a
// goroutine stack, which may move), so the calls allocate nothing.
func outWord(f *callFrame) *uintptr { return &f.w[len(f.w)-1] }

func (r *Runtime) mallocAsync(f *callFrame, size uint64, s Stream) (DevicePtr, error) {
	out := outWord(f)
	*out = 0
	f.w[0], f.w[1], f.w[2] = uintptr(unsafe.Pointer(out)), uintptr(size), uintptr(s)
	err := r.invokeErr(fnMallocAsync, f)
	return DevicePtr(*out), err
}

func (r *Runtime) mallocFromPoolAsync(f *callFrame, size uint64, pool backend.MemPool, s Stream) (DevicePtr, error) {
	out := outWord(f)
	*out = 0
	f.w[0], f.w[1], f.w[2], f.w[3] = uintptr(unsafe.Pointer(out)), uintptr(size), uintptr(pool), uintptr(s)
	err := r.invokeErr(fnMallocFromPoolAsync, f)
	return DevicePtr(*out), err
}

func (r *Runtime) freeAsync(f *callFrame, p DevicePtr, s Stream) error {
	f.w[0], f.w[1] = uintptr(p), uintptr(s)
	return r.invokeErr(fnFreeAsync, f)
}

// MemPoolCreate creates a pool of pinned device memory (cudaMemPoolCreate). A maximum size
// needs CUDA 12.2: older runtimes would read it as a reserved field.
func (r *Runtime) MemPoolCreate(props backend.PoolProps) (backend.MemPool, error) {
	if props.MaxSize != 0 {
		if v, err := r.RuntimeVersion(); err == nil && v < 12020 {
			return 0, r.newError("cudaMemPoolCreate (a pool maximum size needs CUDA 12.2)", codeNotSupported)
		}
	}
	c := memPoolProps{
		allocType:   allocTypePinned,
		handleTypes: int32(props.HandleTypes),
		locType:     int32(props.Location.Type),
		locID:       props.Location.ID,
		maxSize:     props.MaxSize,
	}
	var pool uintptr
	if err := r.call(fnMemPoolCreate, uintptr(unsafe.Pointer(&pool)), uintptr(unsafe.Pointer(&c))); err != nil {
		return 0, err
	}
	return backend.MemPool(pool), nil
}

// MemPoolDestroy destroys a pool (cudaMemPoolDestroy).
func (r *Runtime) MemPoolDestroy(pool backend.MemPool) error {
	return r.call(fnMemPoolDestroy, uintptr(pool))
}

// DeviceGetDefaultMemPool is device's default pool (cudaDeviceGetDefaultMemPool).
func (r *Runtime) DeviceGetDefaultMemPool(device int) (backend.MemPool, error) {
	var pool uintptr
	err := r.call(fnDeviceGetDefaultMemPool, uintptr(unsafe.Pointer(&pool)), uintptr(device))
	return backend.MemPool(pool), err
}

// DeviceGetMemPool is device's current pool (cudaDeviceGetMemPool).
func (r *Runtime) DeviceGetMemPool(device int) (backend.MemPool, error) {
	var pool uintptr
	err := r.call(fnDeviceGetMemPool, uintptr(unsafe.Pointer(&pool)), uintptr(device))
	return backend.MemPool(pool), err
}

// DeviceSetMemPool makes pool device's current pool (cudaDeviceSetMemPool).
func (r *Runtime) DeviceSetMemPool(device int, pool backend.MemPool) error {
	return r.call(fnDeviceSetMemPool, uintptr(device), uintptr(pool))
}

// MemPoolSetAttribute sets attr (cudaMemPoolSetAttribute): booleans through a C int, the
// others through a 64-bit integer.
func (r *Runtime) MemPoolSetAttribute(pool backend.MemPool, attr backend.PoolAttr, value uint64) error {
	if attr.Is64() {
		v := value
		return r.call(fnMemPoolSetAttribute, uintptr(pool), uintptr(attr), uintptr(unsafe.Pointer(&v)))
	}
	v := int32(value)
	return r.call(fnMemPoolSetAttribute, uintptr(pool), uintptr(attr), uintptr(unsafe.Pointer(&v)))
}

// MemPoolGetAttribute reads attr (cudaMemPoolGetAttribute).
func (r *Runtime) MemPoolGetAttribute(pool backend.MemPool, attr backend.PoolAttr) (uint64, error) {
	if attr.Is64() {
		var v uint64
		err := r.call(fnMemPoolGetAttribute, uintptr(pool), uintptr(attr), uintptr(unsafe.Pointer(&v)))
		return v, err
	}
	var v int32
	err := r.call(fnMemPoolGetAttribute, uintptr(pool), uintptr(attr), uintptr(unsafe.Pointer(&v)))
	return uint64(uint32(v)), err
}

// MemPoolTrimTo releases unused pool memory down to keep bytes (cudaMemPoolTrimTo).
func (r *Runtime) MemPoolTrimTo(pool backend.MemPool, keep uint64) error {
	return r.call(fnMemPoolTrimTo, uintptr(pool), uintptr(keep))
}

// MemPoolSetAccess sets device's access to the pool's memory (cudaMemPoolSetAccess, one
// descriptor).
func (r *Runtime) MemPoolSetAccess(pool backend.MemPool, device int, flags backend.AccessFlags) error {
	desc := memAccessDesc{locType: int32(backend.LocationDevice), locID: int32(device), flags: int32(flags)}
	return r.call(fnMemPoolSetAccess, uintptr(pool), uintptr(unsafe.Pointer(&desc)), 1)
}

// MemPoolGetAccess is device's access to the pool's memory (cudaMemPoolGetAccess).
func (r *Runtime) MemPoolGetAccess(pool backend.MemPool, device int) (backend.AccessFlags, error) {
	var flags int32
	loc := [2]int32{int32(backend.LocationDevice), int32(device)}
	err := r.call(fnMemPoolGetAccess, uintptr(unsafe.Pointer(&flags)), uintptr(pool), uintptr(unsafe.Pointer(&loc)))
	return backend.AccessFlags(flags), err
}

// MallocManaged allocates managed memory (cudaMallocManaged; flags: backend.Attach*).
func (r *Runtime) MallocManaged(size uint64, flags uint32) (DevicePtr, error) {
	var p uintptr
	err := r.call(fnMallocManaged, uintptr(unsafe.Pointer(&p)), uintptr(size), uintptr(flags))
	return DevicePtr(p), err
}

// MemPrefetchAsync migrates managed memory to loc on s: the cudaMemLocation form (flags 0) on
// 13.0, the int-device form (cudaCpuDeviceId for the host) before.
func (r *Runtime) MemPrefetchAsync(p DevicePtr, n uint64, loc backend.Location, s Stream) error {
	if err := r.hostNUMABefore13("cudaMemPrefetchAsync", loc); err != nil {
		return err
	}
	if r.major >= 13 {
		return r.call(fnMemPrefetchAsync, uintptr(p), uintptr(n), locationWord(loc), 0, uintptr(s))
	}
	return r.call(fnMemPrefetchAsync, uintptr(p), uintptr(n), legacyDevice(loc), uintptr(s))
}

// MemAdvise advises on managed memory: the cudaMemLocation form on 13.0, int device before.
func (r *Runtime) MemAdvise(p DevicePtr, n uint64, advice backend.Advice, loc backend.Location) error {
	if err := r.hostNUMABefore13("cudaMemAdvise", loc); err != nil {
		return err
	}
	if r.major >= 13 {
		return r.call(fnMemAdvise, uintptr(p), uintptr(n), uintptr(advice), locationWord(loc))
	}
	return r.call(fnMemAdvise, uintptr(p), uintptr(n), uintptr(advice), legacyDevice(loc))
}

// MemRangeGetAttribute reads attr of a managed range into out (cudaMemRangeGetAttribute).
func (r *Runtime) MemRangeGetAttribute(p DevicePtr, n uint64, attr backend.RangeAttr, out []int32) error {
	if len(out) == 0 {
		return r.newError("cudaMemRangeGetAttribute", codeInvalidValue)
	}
	return r.call(fnMemRangeGetAttribute, uintptr(unsafe.Pointer(&out[0])), uintptr(4*len(out)), uintptr(attr), uintptr(p), uintptr(n))
}

// StreamAttachMemAsync attaches managed memory to s (cudaStreamAttachMemAsync).
func (r *Runtime) StreamAttachMemAsync(s Stream, p DevicePtr, n uint64, flags uint32) error {
	return r.call(fnStreamAttachMemAsync, uintptr(s), uintptr(p), uintptr(n), uintptr(flags))
}

// PointerGetAttributes describes p (cudaPointerGetAttributes).
func (r *Runtime) PointerGetAttributes(p uintptr) (backend.PointerAttrs, error) {
	var a pointerAttributes
	if err := r.call(fnPointerGetAttributes, uintptr(unsafe.Pointer(&a)), p); err != nil {
		return backend.PointerAttrs{}, err
	}
	return backend.PointerAttrs{
		Type:          backend.MemoryType(a.memType),
		Device:        int(a.device),
		DevicePointer: a.devicePointer,
		HostPointer:   a.hostPointer,
	}, nil
}

// HostGetDevicePointer is the device address of mapped pinned memory (cudaHostGetDevicePointer).
func (r *Runtime) HostGetDevicePointer(p unsafe.Pointer) (DevicePtr, error) {
	var d uintptr
	err := r.call(fnHostGetDevicePointer, uintptr(unsafe.Pointer(&d)), uintptr(p), 0)
	return DevicePtr(d), err
}
