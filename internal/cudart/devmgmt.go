package cudart

import (
	"encoding/binary"
	"fmt"
	"unsafe"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// DeviceGetLimit reads one cudaLimit of the current device (cudaDeviceGetLimit).
func (r *Runtime) DeviceGetLimit(l backend.Limit) (uint64, error) {
	var v uint64 // size_t
	if err := r.call(fnDeviceGetLimit, uintptr(unsafe.Pointer(&v)), uintptr(uint32(l))); err != nil {
		return 0, err
	}
	return v, nil
}

// DeviceSetLimit sets one cudaLimit of the current device (cudaDeviceSetLimit).
func (r *Runtime) DeviceSetLimit(l backend.Limit, v uint64) error {
	return r.call(fnDeviceSetLimit, uintptr(uint32(l)), uintptr(v))
}

// getEnum calls a cudaError_t f(enum *) function.
func (r *Runtime) getEnum(id int) (int32, error) {
	var v int32
	if err := r.call(id, uintptr(unsafe.Pointer(&v))); err != nil {
		return 0, err
	}
	return v, nil
}

// SetDeviceFlags records flags for the current device (cudaSetDeviceFlags).
func (r *Runtime) SetDeviceFlags(flags uint32) error { return r.call(fnSetDeviceFlags, uintptr(flags)) }

// GetDeviceFlags are the current device's flags (cudaGetDeviceFlags).
func (r *Runtime) GetDeviceFlags() (uint32, error) {
	var f uint32
	if err := r.call(fnGetDeviceFlags, uintptr(unsafe.Pointer(&f))); err != nil {
		return 0, err
	}
	return f, nil
}

// PeekAtLastError is the calling thread's last runtime error, not cleared
// (cudaPeekAtLastError).
func (r *Runtime) PeekAtLastError() error { return r.call(fnPeekAtLastError) }

// DeviceGetByPCIBusID is the ordinal of the device at PCI address id (cudaDeviceGetByPCIBusId).
func (r *Runtime) DeviceGetByPCIBusID(id string) (int, error) {
	var d int32
	if err := r.call(fnDeviceGetByPCIBusId, uintptr(unsafe.Pointer(&d)), uintptr(unsafe.Pointer(cstr(id)))); err != nil {
		return 0, err
	}
	return int(d), nil
}

// flushTargetCurrentDevice is cudaFlushGPUDirectRDMAWritesTargetCurrentDevice, the only target.
const flushTargetCurrentDevice = 0

// DeviceFlushGPUDirectRDMAWrites flushes GPUDirect RDMA writes to the current device within
// scope (cudaDeviceFlushGPUDirectRDMAWrites).
func (r *Runtime) DeviceFlushGPUDirectRDMAWrites(scope backend.FlushScope) error {
	return r.call(fnDeviceFlushGPUDirectRDMAWrites, flushTargetCurrentDevice, uintptr(uint32(scope)))
}

// cudaDeviceProp offsets of the identity fields, the same in every layout from 10.0 to 13.0:
// char name[256]; cudaUUID_t uuid; char luid[8]; unsigned int luidDeviceNodeMask.
const (
	propUUIDOffset     = 256
	propLUIDOffset     = 272
	propNodeMaskOffset = 280
)

// DeviceUUID reads dev's UUID and LUID from cudaGetDeviceProperties.
func (r *Runtime) DeviceUUID(dev int) (backend.DeviceUUID, error) {
	var u backend.DeviceUUID
	buf, err := r.deviceProps(dev)
	if err != nil {
		return u, err
	}
	copy(u.UUID[:], buf[propUUIDOffset:])
	copy(u.LUID[:], buf[propLUIDOffset:])
	u.LUIDNodeMask = binary.NativeEndian.Uint32(buf[propNodeMaskOffset:])
	return u, nil
}

// deviceProps is dev's cudaDeviceProp as bytes (cudaGetDeviceProperties_v2 on 12.x when
// exported).
func (r *Runtime) deviceProps(dev int) ([]byte, error) {
	id := fnGetDeviceProperties
	if r.major == 12 && r.syms.has(fnGetDevicePropertiesV2) {
		id = fnGetDevicePropertiesV2
	}
	buf := make([]byte, devicePropBufSize)
	if err := r.call(id, uintptr(unsafe.Pointer(&buf[0])), uintptr(dev)); err != nil {
		return nil, err
	}
	return buf, nil
}

// primaryContext reports whether dev's primary context is active, and its flags
// (cuDevicePrimaryCtxGetState).
func (r *Runtime) primaryContext(dev int) (active bool, flags uint32, err error) {
	var cu, act int32
	if err := r.driverCall(drvDeviceGet, uintptr(unsafe.Pointer(&cu)), uintptr(dev)); err != nil {
		return false, 0, err
	}
	if err := r.driverCall(drvDevicePrimaryCtxGetState, uintptr(cu), uintptr(unsafe.Pointer(&flags)), uintptr(unsafe.Pointer(&act))); err != nil {
		return false, 0, err
	}
	return act != 0, flags, nil
}

// initDeviceFlagsAreValid is cudaInitDeviceFlagsAreValid: cudaInitDevice applies deviceFlags.
const initDeviceFlagsAreValid = 1

// OpenWithFlags opens device ordinal as Open does, with flags (cudaDeviceSchedule*,
// cudaDeviceMapHost...) set before its primary context is made: cudaInitDevice(dev, flags,
// cudaInitDeviceFlagsAreValid) on 12+, cudaSetDeviceFlags then cudaFree(0) before. The state of
// the primary context is read first (cuDevicePrimaryCtxGetState), before cudaSetDevice, which
// on 12+ makes the context itself. If the context is already active with other scheduling or
// memop flags, it fails with cudaerr.SetOnActiveProcess instead of changing them under the
// code that made it.
func (b *Backend) OpenWithFlags(ordinal int, flags uint32) (backend.Device, error) {
	const op = "cudaSetDeviceFlags"
	if flags&^backend.DeviceFlagsMask != 0 {
		return nil, &cudaerr.Error{Op: op, Code: cudaerr.InvalidValue, Message: fmt.Sprintf("device flags %#x have bits outside the mask %#x", flags, backend.DeviceFlagsMask)}
	}
	active, cur, err := b.rt.primaryContext(ordinal)
	if err != nil {
		return nil, err
	}
	if active && !sameContextFlags(cur, flags) {
		return nil, &cudaerr.Error{Op: op, Code: cudaerr.SetOnActiveProcess, Message: fmt.Sprintf(
			"device %d's primary context already exists with flags %#x; flags %#x can only be set before it is made", ordinal, cur, flags)}
	}
	switch {
	case active:
		err = b.rt.SetDevice(ordinal)
	case b.rt.major >= 12 && b.rt.syms.has(fnInitDevice):
		if err = b.rt.call(fnInitDevice, uintptr(ordinal), uintptr(flags), initDeviceFlagsAreValid); err == nil {
			err = b.rt.SetDevice(ordinal)
		}
	default:
		if err = b.rt.SetDevice(ordinal); err == nil {
			if err = b.rt.SetDeviceFlags(flags); err == nil {
				err = b.rt.call(fnFree, 0)
			}
		}
	}
	if err != nil {
		return nil, err
	}
	return &device{b: b, rt: b.rt, ordinal: ordinal, eventQuery: b.rt.anyThreadEventQuery()}, nil
}

// sameContextFlags compares what flags change on a context that exists: the scheduling and
// memop flags. Mapped host memory is implicit for the runtime, and local-memory resizing is
// the default behaviour, so neither tells two settings apart.
func sameContextFlags(a, b uint32) bool {
	const m = backend.DeviceScheduleMask | backend.DeviceSyncMemops
	return a&m == b&m
}

// DeviceByPCIBusID is the ordinal of the device at busID (cudaDeviceGetByPCIBusId); it needs no
// open device.
func (b *Backend) DeviceByPCIBusID(busID string) (int, error) { return b.rt.DeviceGetByPCIBusID(busID) }

// ErrorName is the loaded runtime's cudaGetErrorName for code.
func (b *Backend) ErrorName(code cudaerr.Code) string { return b.rt.ErrorName(code) }

// ErrorString is the loaded runtime's cudaGetErrorString for code.
func (b *Backend) ErrorString(code cudaerr.Code) string { return b.rt.ErrorString(code) }

var (
	_ backend.FlagOpener     = (*Backend)(nil)
	_ backend.PCIResolver    = (*Backend)(nil)
	_ backend.ErrorDescriber = (*Backend)(nil)
)

func (d *device) UUID() (backend.DeviceUUID, error) { return d.rt.DeviceUUID(d.ordinal) }

func (d *device) Limit(l backend.Limit) (uint64, error) { return d.rt.DeviceGetLimit(l) }

func (d *device) SetLimit(l backend.Limit, v uint64) error { return d.rt.DeviceSetLimit(l, v) }

func (d *device) CacheConfig() (int32, error) { return d.rt.getEnum(fnDeviceGetCacheConfig) }

func (d *device) SetCacheConfig(c int32) error {
	return d.rt.call(fnDeviceSetCacheConfig, uintptr(uint32(c)))
}

func (d *device) SharedMemConfig() (int32, error) { return d.rt.getEnum(fnDeviceGetSharedMemConfig) }

func (d *device) SetSharedMemConfig(c int32) error {
	return d.rt.call(fnDeviceSetSharedMemConfig, uintptr(uint32(c)))
}

func (d *device) DeviceFlags() (uint32, error) { return d.rt.GetDeviceFlags() }

func (d *device) PeekLastError() error { return d.rt.PeekAtLastError() }

func (d *device) FlushGPUDirectRDMAWrites(scope backend.FlushScope) error {
	return d.rt.DeviceFlushGPUDirectRDMAWrites(scope)
}
