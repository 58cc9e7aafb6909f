package sim

import (
	"sync"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// Peer access: every pair of simulated devices has a link (as on an NVLink-connected board),
// so CanAccessPeer is true for any two distinct devices. Enabling access is per direction and
// tracked with the runtime's errors; a kernel of this device may touch another device's memory
// only while access to it is enabled (memView), as on a GPU, where the access would fault.
// Copies between devices need no peer access: the runtime stages them when there is none.

// peerState is the set of devices whose memory a device may access: written by its actor's
// thread, read by its streams' goroutines while kernels run.
type peerState struct {
	mu      sync.RWMutex
	enabled map[int]bool
}

func (p *peerState) has(ordinal int) bool {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.enabled[ordinal]
}

// set records access to ordinal as on or off and reports whether it was already so.
func (p *peerState) set(ordinal int, on bool) (already bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.enabled[ordinal] == on {
		return true
	}
	if p.enabled == nil {
		p.enabled = map[int]bool{}
	}
	if on {
		p.enabled[ordinal] = true
	} else {
		delete(p.enabled, ordinal)
	}
	return false
}

// checkPeer is nil when peer is another device of the simulator, else op's InvalidDevice error.
func (d *device) checkPeer(op string, peer int) error {
	if peer < 0 || peer >= len(d.b.devices) {
		return d.fail(op, cudaerr.InvalidDevice, "peer device %d out of range: the simulator has %d device(s)", peer, len(d.b.devices))
	}
	if peer == d.ordinal {
		return d.fail(op, cudaerr.InvalidDevice, "device %d is its own peer", peer)
	}
	return nil
}

// CanAccessPeer is true for any other device of the simulator and false for the device itself
// (cudaDeviceCanAccessPeer answers 0 there, without an error).
func (d *device) CanAccessPeer(peer int) (bool, error) {
	const op = "cudaDeviceCanAccessPeer"
	if err := d.alive(op); err != nil {
		return false, err
	}
	if peer == d.ordinal {
		return false, nil
	}
	if err := d.checkPeer(op, peer); err != nil {
		return false, err
	}
	return true, nil
}

// P2PAttribute answers what an NVLink-connected pair reports: the best performance rank (0),
// access supported, native atomics, CUDA array access, and not only partial atomics.
func (d *device) P2PAttribute(attr backend.P2PAttr, peer int) (int, error) {
	const op = "cudaDeviceGetP2PAttribute"
	if err := d.alive(op); err != nil {
		return 0, err
	}
	if err := d.checkPeer(op, peer); err != nil {
		return 0, err
	}
	switch attr {
	case backend.P2PPerformanceRank, backend.P2POnlyPartialAtomics:
		return 0, nil
	case backend.P2PAccessSupported, backend.P2PNativeAtomics, backend.P2PCudaArrayAccess:
		return 1, nil
	}
	return 0, d.fail(op, cudaerr.InvalidValue, "unknown peer-to-peer attribute %d", attr)
}

// EnablePeerAccess lets this device's kernels access peer's memory.
func (d *device) EnablePeerAccess(peer int) error {
	const op = "cudaDeviceEnablePeerAccess"
	if err := d.alive(op); err != nil {
		return err
	}
	if err := d.checkPeer(op, peer); err != nil {
		return err
	}
	if d.peers.set(peer, true) {
		return d.fail(op, cudaerr.PeerAccessAlreadyEnabled, "device %d already has access to device %d", d.ordinal, peer)
	}
	return nil
}

// DisablePeerAccess stops this device's kernels accessing peer's memory.
func (d *device) DisablePeerAccess(peer int) error {
	const op = "cudaDeviceDisablePeerAccess"
	if err := d.alive(op); err != nil {
		return err
	}
	if err := d.checkPeer(op, peer); err != nil {
		return err
	}
	if d.peers.set(peer, false) {
		return d.fail(op, cudaerr.PeerAccessNotEnabled, "device %d has no access to device %d to disable", d.ordinal, peer)
	}
	return nil
}

// kernelView resolves [p, p+n) for a kernel of d: d's own memory, a peer's whose access d
// enabled, or mapped host memory (mapped.go).
func (d *device) kernelView(p backend.DevicePtr, n uint64) ([]byte, string) {
	if uint64(p) < addrBase { // below every device address: host memory, if anything
		if b, detail, ok := d.b.host.mappedView(uintptr(p), n); ok {
			return b, detail
		}
	}
	if owner := d.b.ownerOf(uint64(p)); owner != nil && owner != d && d.peers.has(owner.ordinal) {
		return owner.resolve(p, n)
	}
	return d.resolve(p, n)
}

// kernelExtent is extent for a kernel of d, peers' memory included as kernelView does.
func (d *device) kernelExtent(p backend.DevicePtr) (uint64, string) {
	if uint64(p) < addrBase {
		if n, detail, ok := d.b.host.mappedExtent(uintptr(p)); ok {
			return n, detail
		}
	}
	if owner := d.b.ownerOf(uint64(p)); owner != nil && owner != d && d.peers.has(owner.ordinal) {
		return owner.extent(p)
	}
	return d.extent(p)
}

// MemcpyPeerAsync copies n bytes from src, device srcDev's memory, to dst, device dstDev's, on
// s, a stream of this device: ordered like any other copy on s.
func (d *device) MemcpyPeerAsync(dst backend.DevicePtr, dstDev int, src backend.DevicePtr, srcDev int, n uint64, s backend.Stream) error {
	const op = "cudaMemcpyPeerAsync"
	if err := d.alive(op); err != nil {
		return err
	}
	st, err := d.ownStream(op, s)
	if err != nil || n == 0 {
		return err
	}
	for _, o := range []int{dstDev, srcDev} {
		if o < 0 || o >= len(d.b.devices) {
			return d.fail(op, cudaerr.InvalidDevice, "device %d out of range: the simulator has %d device(s)", o, len(d.b.devices))
		}
	}
	from, to := d.b.devices[srcDev], d.b.devices[dstDev]
	return d.queueCopy(op, "peer copy", st, func() ([]byte, string) { return from.resolve(src, n) },
		func() ([]byte, string) { return to.resolve(dst, n) })
}

var _ backend.PeerDevice = (*device)(nil)
