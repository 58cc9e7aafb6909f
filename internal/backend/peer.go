package backend

// P2PAttr is a cudaDeviceP2PAttr value: a property of the link from one device to another.
type P2PAttr int32

// Peer-to-peer attributes (identical in every runtime from 11.4 to 13.0).
const (
	P2PPerformanceRank    P2PAttr = 1 // relative performance of the link: lower is faster
	P2PAccessSupported    P2PAttr = 2 // 1 when peer access may be enabled
	P2PNativeAtomics      P2PAttr = 3 // 1 when atomics over the link are native
	P2PCudaArrayAccess    P2PAttr = 4 // 1 when CUDA arrays may be accessed over the link
	P2POnlyPartialAtomics P2PAttr = 5 // 1 when only some atomics are native (12.8+ runtimes)
)

// PeerDevice is peer-to-peer access between devices of one process: whether this device can
// map another's memory, enabling that mapping, and copies between the two.
type PeerDevice interface {
	// CanAccessPeer reports whether this device can access peer's memory directly
	// (cudaDeviceCanAccessPeer); false for the device itself.
	CanAccessPeer(peer int) (bool, error)
	// P2PAttribute reads attr of the link from this device to peer (cudaDeviceGetP2PAttribute).
	P2PAttribute(attr P2PAttr, peer int) (int, error)
	// EnablePeerAccess lets this device's kernels and copies access peer's memory
	// (cudaDeviceEnablePeerAccess): cudaerr.PeerAccessAlreadyEnabled when already enabled,
	// cudaerr.PeerAccessUnsupported when the devices have no link.
	EnablePeerAccess(peer int) error
	// DisablePeerAccess undoes EnablePeerAccess (cudaDeviceDisablePeerAccess):
	// cudaerr.PeerAccessNotEnabled when it was not enabled.
	DisablePeerAccess(peer int) error
	// MemcpyPeerAsync copies n bytes from src on device srcDev to dst on device dstDev,
	// ordered on s, a stream of this device (cudaMemcpyPeerAsync). It needs no peer access:
	// without it the runtime stages the copy through the host.
	//remote:posted
	MemcpyPeerAsync(dst DevicePtr, dstDev int, src DevicePtr, srcDev int, n uint64, s Stream) error
}
