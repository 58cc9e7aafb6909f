package cudart

import (
	"unsafe"

	"github.com/gpuactor/gpuactor/internal/backend"
)

// The peer-to-peer calls. None is hot (a copy moves many bytes per call), so they go through
// call's generic path. cudaDeviceEnablePeerAccess and cudaDeviceDisablePeerAccess act on the
// calling thread's current device: the device actor's thread, which has its device current.

// DeviceCanAccessPeer reports whether dev can access peer's memory directly
// (cudaDeviceCanAccessPeer).
func (r *Runtime) DeviceCanAccessPeer(dev, peer int) (bool, error) {
	var v int32
	if err := r.call(fnDeviceCanAccessPeer, uintptr(unsafe.Pointer(&v)), uintptr(dev), uintptr(peer)); err != nil {
		return false, err
	}
	return v != 0, nil
}

// DeviceGetP2PAttribute reads attr of the link from src to dst (cudaDeviceGetP2PAttribute).
func (r *Runtime) DeviceGetP2PAttribute(attr backend.P2PAttr, src, dst int) (int, error) {
	var v int32
	if err := r.call(fnDeviceGetP2PAttribute, uintptr(unsafe.Pointer(&v)), uintptr(attr), uintptr(src), uintptr(dst)); err != nil {
		return 0, err
	}
	return int(v), nil
}

// DeviceEnablePeerAccess lets the current device access peer's memory
// (cudaDeviceEnablePeerAccess; its flags are reserved and must be 0).
func (r *Runtime) DeviceEnablePeerAccess(peer int) error {
	return r.call(fnDeviceEnablePeerAccess, uintptr(peer), 0)
}

// DeviceDisablePeerAccess stops the current device accessing peer's memory
// (cudaDeviceDisablePeerAccess).
func (r *Runtime) DeviceDisablePeerAccess(peer int) error {
	return r.call(fnDeviceDisablePeerAccess, uintptr(peer))
}

// MemcpyPeerAsync copies n bytes from src on srcDev to dst on dstDev, ordered on s
// (cudaMemcpyPeerAsync).
func (r *Runtime) MemcpyPeerAsync(dst DevicePtr, dstDev int, src DevicePtr, srcDev int, n uint64, s Stream) error {
	return r.call(fnMemcpyPeerAsync, uintptr(dst), uintptr(dstDev), uintptr(src), uintptr(srcDev), uintptr(n), uintptr(s))
}

func (d *device) CanAccessPeer(peer int) (bool, error) {
	return d.rt.DeviceCanAccessPeer(d.ordinal, peer)
}

func (d *device) P2PAttribute(attr backend.P2PAttr, peer int) (int, error) {
	return d.rt.DeviceGetP2PAttribute(attr, d.ordinal, peer)
}

func (d *device) EnablePeerAccess(peer int) error { return d.rt.DeviceEnablePeerAccess(peer) }

func (d *device) DisablePeerAccess(peer int) error { return d.rt.DeviceDisablePeerAccess(peer) }

func (d *device) MemcpyPeerAsync(dst DevicePtr, dstDev int, src DevicePtr, srcDev int, n uint64, s Stream) error {
	return d.rt.MemcpyPeerAsync(dst, dstDev, src, srcDev, n, s)
}

var _ backend.PeerDevice = (*device)(nil)
