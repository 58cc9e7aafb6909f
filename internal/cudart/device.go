package cudart

import (
	"unsafe"
)

// GetDeviceCount is the number of CUDA devices (cudaGetDeviceCount). Without a usable driver it
// fails with cudaerr.InsufficientDriver or cudaerr.NoDevice.
func (r *Runtime) GetDeviceCount() (int, error) {
	var n int32
	if err := r.call(fnGetDeviceCount, uintptr(unsafe.Pointer(&n))); err != nil {
		return 0, err
	}
	return int(n), nil
}

// SetDevice makes dev the calling OS thread's current device (cudaSetDevice).
func (r *Runtime) SetDevice(dev int) error { return r.call(fnSetDevice, uintptr(dev)) }

// GetDevice is the calling OS thread's current device (cudaGetDevice).
func (r *Runtime) GetDevice() (int, error) {
	var d int32
	if err := r.call(fnGetDevice, uintptr(unsafe.Pointer(&d))); err != nil {
		return 0, err
	}
	return int(d), nil
}

// InitDevice initializes dev's primary context: cudaInitDevice(dev, 0, 0) on runtimes that have
// it (12.0+), else cudaFree(0) (which initializes the current device: call SetDevice first).
func (r *Runtime) InitDevice(dev int) error {
	if r.major >= 12 && r.syms.has(fnInitDevice) {
		return r.call(fnInitDevice, uintptr(dev), 0, 0)
	}
	return r.call(fnFree, 0)
}

// DeviceGetAttribute reads one cudaDeviceAttr of device dev (cudaDeviceGetAttribute).
func (r *Runtime) DeviceGetAttribute(attr Attr, dev int) (int, error) {
	var v int32
	if err := r.call(fnDeviceGetAttribute, uintptr(unsafe.Pointer(&v)), uintptr(attr), uintptr(dev)); err != nil {
		return 0, err
	}
	return int(v), nil
}

// devicePropBufSize is far larger than any cudaDeviceProp (about 1 KiB in 11.x–13.0), whose
// layout changes between versions; only the name at offset 0 is read.
const devicePropBufSize = 4096

// DeviceName is dev's marketing name, from cudaGetDeviceProperties (cudaGetDeviceProperties_v2
// on 12.x when exported). The struct's layout differs by version, but char name[256] is at
// offset 0 in all of them.
func (r *Runtime) DeviceName(dev int) (string, error) {
	buf, err := r.deviceProps(dev)
	if err != nil {
		return "", err
	}
	return cbytes(buf[:256]), nil
}

// MemGetInfo is the current device's free and total memory in bytes (cudaMemGetInfo).
func (r *Runtime) MemGetInfo() (free, total uint64, err error) {
	var f, t uint64
	err = r.call(fnMemGetInfo, uintptr(unsafe.Pointer(&f)), uintptr(unsafe.Pointer(&t)))
	return f, t, err
}

// DeviceGetPCIBusID is dev's PCI address, "domain:bus:device.function" (cudaDeviceGetPCIBusId).
func (r *Runtime) DeviceGetPCIBusID(dev int) (string, error) {
	var buf [64]byte
	if err := r.call(fnDeviceGetPCIBusId, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), uintptr(dev)); err != nil {
		return "", err
	}
	return cbytes(buf[:]), nil
}

// DeviceSynchronize waits for all work on the current device (cudaDeviceSynchronize).
func (r *Runtime) DeviceSynchronize() error { return r.call(fnDeviceSynchronize) }

// DeviceGetStreamPriorityRange is the current device's (least, greatest) stream priority; the
// greatest priority is numerically lowest (cudaDeviceGetStreamPriorityRange).
func (r *Runtime) DeviceGetStreamPriorityRange() (least, greatest int, err error) {
	var l, g int32
	err = r.call(fnDeviceGetStreamPriorityRange, uintptr(unsafe.Pointer(&l)), uintptr(unsafe.Pointer(&g)))
	return int(l), int(g), err
}

// GetLastError returns and clears the calling thread's last runtime error (cudaGetLastError);
// the error's Op is "cudaGetLastError", since the runtime does not say which call failed.
func (r *Runtime) GetLastError() error { return r.call(fnGetLastError) }
