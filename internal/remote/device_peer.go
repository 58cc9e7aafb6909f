package remote

import (
	"github.com/gpuactor/gpuactor/internal/backend"
)

// IpcGetMemHandle exports device memory for another process.
func (d *Device) IpcGetMemHandle(p backend.DevicePtr) (backend.IPCHandle, error) {
	return d.handleOf(mIpcGetMemHandle, uint64(p))
}

// IpcOpenMemHandle maps another process's exported memory into the worker.
func (d *Device) IpcOpenMemHandle(h backend.IPCHandle, flags uint32) (backend.DevicePtr, error) {
	e := request(mIpcOpenMemHandle)
	e.handle(h)
	e.u64(uint64(flags))
	r, err := d.do(e)
	if err != nil {
		return 0, err
	}
	return backend.DevicePtr(r.u64()), nil
}

// IpcCloseMemHandle unmaps memory opened with IpcOpenMemHandle.
func (d *Device) IpcCloseMemHandle(p backend.DevicePtr) error {
	return d.void(mIpcCloseMemHandle, uint64(p))
}

// IpcGetEventHandle exports an interprocess event.
func (d *Device) IpcGetEventHandle(e backend.Event) (backend.IPCHandle, error) {
	return d.handleOf(mIpcGetEventHandle, uint64(e))
}

// IpcOpenEventHandle opens another process's exported event in the worker.
func (d *Device) IpcOpenEventHandle(h backend.IPCHandle) (backend.Event, error) {
	e := request(mIpcOpenEventHandle)
	e.handle(h)
	r, err := d.do(e)
	if err != nil {
		return 0, err
	}
	return backend.Event(r.u64()), nil
}

// MemPoolExportPointer exports an allocation of an exportable pool.
func (d *Device) MemPoolExportPointer(p backend.DevicePtr) (backend.IPCHandle, error) {
	return d.handleOf(mMemPoolExportPointer, uint64(p))
}

// MemPoolImportPointer imports an allocation into an imported pool.
func (d *Device) MemPoolImportPointer(pool backend.MemPool, data backend.IPCHandle) (backend.DevicePtr, error) {
	e := request(mMemPoolImportPointer)
	e.u64(uint64(pool))
	e.handle(data)
	r, err := d.do(e)
	if err != nil {
		return 0, err
	}
	return backend.DevicePtr(r.u64()), nil
}

func (d *Device) handleOf(m method, arg uint64) (backend.IPCHandle, error) {
	e := request(m)
	e.u64(arg)
	r, err := d.do(e)
	if err != nil {
		return backend.IPCHandle{}, err
	}
	h := r.handle()
	return h, r.err
}

// CanAccessPeer reports whether the device can access peer's memory.
func (d *Device) CanAccessPeer(peer int) (bool, error) {
	v, err := d.val(mCanAccessPeer, uint64(int64(peer)))
	return v != 0, err
}

// P2PAttribute is a peer link attribute.
func (d *Device) P2PAttribute(attr backend.P2PAttr, peer int) (int, error) {
	v, err := d.val(mP2PAttribute, uint64(attr), uint64(int64(peer)))
	return int(v), err
}

// EnablePeerAccess enables access to peer's memory, in the worker.
func (d *Device) EnablePeerAccess(peer int) error {
	return d.void(mEnablePeerAccess, uint64(int64(peer)))
}

// DisablePeerAccess disables access to peer's memory, in the worker.
func (d *Device) DisablePeerAccess(peer int) error {
	return d.void(mDisablePeerAccess, uint64(int64(peer)))
}

// MemcpyPeerAsync queues a copy between devices on s. Both pointers must be the worker's.
func (d *Device) MemcpyPeerAsync(dst backend.DevicePtr, dstDev int, src backend.DevicePtr, srcDev int, n uint64, s backend.Stream) error {
	return d.postVoid(mMemcpyPeerAsync, s, uint64(dst), uint64(int64(dstDev)), uint64(src), uint64(int64(srcDev)), n, uint64(s))
}

// StreamGetDevice is the ordinal of s's device.
func (d *Device) StreamGetDevice(s backend.Stream) (int, error) {
	v, err := d.val(mStreamGetDevice, uint64(s))
	return int(int64(v)), err
}

// StreamGetFlags is s's flags.
func (d *Device) StreamGetFlags(s backend.Stream) (uint32, error) {
	v, err := d.val(mStreamGetFlags, uint64(s))
	return uint32(v), err
}

// StreamGetPriority is s's priority.
func (d *Device) StreamGetPriority(s backend.Stream) (int, error) {
	v, err := d.val(mStreamGetPriority, uint64(s))
	return int(int64(v)), err
}

// ExternalMemoryMappedBuffer maps a range of imported memory.
func (d *Device) ExternalMemoryMappedBuffer(m backend.ExternalMemory, offset, size uint64) (backend.DevicePtr, error) {
	v, err := d.val(mExternalMemoryMappedBuffer, uint64(m), offset, size)
	return backend.DevicePtr(v), err
}

// DestroyExternalMemory releases imported memory.
func (d *Device) DestroyExternalMemory(m backend.ExternalMemory) error {
	return d.void(mDestroyExternalMemory, uint64(m))
}

// SignalExternalSemaphore queues a signal of sem on s.
func (d *Device) SignalExternalSemaphore(sem backend.ExternalSemaphore, value uint64, s backend.Stream) error {
	return d.void(mSignalExternalSemaphore, uint64(sem), value, uint64(s))
}

// WaitExternalSemaphore queues a wait on sem on s.
func (d *Device) WaitExternalSemaphore(sem backend.ExternalSemaphore, value uint64, s backend.Stream) error {
	return d.void(mWaitExternalSemaphore, uint64(sem), value, uint64(s))
}

// DestroyExternalSemaphore releases an imported semaphore.
func (d *Device) DestroyExternalSemaphore(sem backend.ExternalSemaphore) error {
	return d.void(mDestroyExternalSemaphore, uint64(sem))
}
