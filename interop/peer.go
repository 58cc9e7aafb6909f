package interop

import (
	"context"
	"errors"
	"fmt"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
)

// ErrNoPeerAccess: the two devices cannot access each other's memory directly: they are the
// same device, or no link joins them. Copies between them still work (streams.Stream.Copy
// stages them through the host); kernels of one cannot touch the other's memory.
var ErrNoPeerAccess = core.ErrNoPeerAccess

// peerPair checks dev and peer for a peer call named call: both non-nil, open, distinct and of
// one backend.
func peerPair(call string, dev, peer *device.Device) (*core.Device, *core.Device, error) {
	if dev == nil || peer == nil {
		return nil, nil, core.Invalid("%s with a nil device", call)
	}
	d, p := (*core.Device)(dev), (*core.Device)(peer)
	for _, x := range []*core.Device{d, p} {
		if x.Closed() {
			return nil, nil, core.Closed("%s: device %d used after Close", call, x.Ordinal())
		}
	}
	if !core.SameMachine(d, p) {
		return nil, nil, core.Invalid("%s: device %d (%s) and device %d (%s) belong to different backends",
			call, d.Ordinal(), d.BackendName(), p.Ordinal(), p.BackendName())
	}
	if d.Ordinal() == p.Ordinal() {
		return nil, nil, fmt.Errorf("%w: %w: %s: device %d and its peer are the same device",
			ErrNoPeerAccess, core.ErrInvalidArgument, call, d.Ordinal())
	}
	return d, p, nil
}

// noLink turns the runtime's refusals for a pair without a link into ErrNoPeerAccess errors
// naming both devices; other errors pass through.
func noLink(err error, call string, d, p *core.Device) error {
	if errors.Is(err, cudaerr.PeerAccessUnsupported) || errors.Is(err, cudaerr.InvalidDevice) {
		return fmt.Errorf("%w: %s: device %d cannot access device %d: %w", ErrNoPeerAccess, call, d.Ordinal(), p.Ordinal(), err)
	}
	return err
}

// CanAccessPeer reports whether dev can access peer's memory directly (cudaDeviceCanAccessPeer):
// whether EnablePeerAccess(dev, peer) can succeed. Access is one way: ask both directions for
// both. It returns once dev's actor has asked the runtime. dev and peer being the same device
// is an error matching ErrNoPeerAccess and device.ErrInvalidArgument.
func CanAccessPeer(ctx context.Context, dev, peer *device.Device) (bool, error) {
	d, p, err := peerPair("CanAccessPeer", dev, peer)
	if err != nil {
		return false, err
	}
	return core.Run(ctx, d, func(rt backend.Device, _ *core.Tracker) (bool, error) {
		return rt.CanAccessPeer(p.Ordinal())
	}).Await(ctx)
}

// P2PAttr is a property of the link from one device to another (cudaDeviceP2PAttr).
type P2PAttr int

// The link attributes P2PAttribute reads.
const (
	// P2PPerformanceRank is the link's relative performance: lower is faster.
	P2PPerformanceRank P2PAttr = P2PAttr(backend.P2PPerformanceRank)
	// P2PAccessSupported is 1 when peer access may be enabled over the link.
	P2PAccessSupported P2PAttr = P2PAttr(backend.P2PAccessSupported)
	// P2PNativeAtomics is 1 when atomic operations over the link are native.
	P2PNativeAtomics P2PAttr = P2PAttr(backend.P2PNativeAtomics)
	// P2PArrayAccess is 1 when CUDA arrays may be accessed over the link.
	P2PArrayAccess P2PAttr = P2PAttr(backend.P2PCudaArrayAccess)
	// P2POnlyPartialAtomics is 1 when only some atomic operations over the link are native
	// (runtimes 12.8 and later; older ones answer an error matching cudaerr.InvalidValue).
	P2POnlyPartialAtomics P2PAttr = P2PAttr(backend.P2POnlyPartialAtomics)
)

// String names the attribute.
func (a P2PAttr) String() string {
	switch a {
	case P2PPerformanceRank:
		return "P2PPerformanceRank"
	case P2PAccessSupported:
		return "P2PAccessSupported"
	case P2PNativeAtomics:
		return "P2PNativeAtomics"
	case P2PArrayAccess:
		return "P2PArrayAccess"
	case P2POnlyPartialAtomics:
		return "P2POnlyPartialAtomics"
	}
	return fmt.Sprintf("P2PAttr(%d)", int(a))
}

// P2PAttribute reads attr of the link from dev to peer (cudaDeviceGetP2PAttribute); it returns
// once dev's actor has asked the runtime. dev and peer being the same device is an error
// matching ErrNoPeerAccess; an unknown attr, device.ErrInvalidArgument.
func P2PAttribute(ctx context.Context, dev, peer *device.Device, attr P2PAttr) (int, error) {
	d, p, err := peerPair("P2PAttribute", dev, peer)
	if err != nil {
		return 0, err
	}
	if attr < P2PPerformanceRank || attr > P2POnlyPartialAtomics {
		return 0, core.Invalid("P2PAttribute: unknown attribute %v", attr)
	}
	return core.Run(ctx, d, func(rt backend.Device, _ *core.Tracker) (int, error) {
		return rt.P2PAttribute(backend.P2PAttr(attr), p.Ordinal())
	}).Await(ctx)
}

// accessOf is the peers d has enabled access to through this package (kept in core, where
// graphs' peer copy nodes check it).
func accessOf(d *core.Device) *core.PeerAccess { return d.PeerAccess() }

// EnablePeerAccess lets dev's kernels and copies access peer's memory directly
// (cudaDeviceEnablePeerAccess, run on dev's actor, whose context gains the access). Access is
// one way: enable it on both devices for kernels of each to touch the other's memory. It is
// idempotent: enabling access that is already enabled (by this call or by anyone else) is not
// an error. It returns once access is enabled. The same device twice, or a pair the runtime
// refuses for want of a link, is an error matching ErrNoPeerAccess naming both devices.
func EnablePeerAccess(ctx context.Context, dev, peer *device.Device) error {
	d, p, err := peerPair("EnablePeerAccess", dev, peer)
	if err != nil {
		return err
	}
	return core.Do(ctx, d, func(rt backend.Device, _ *core.Tracker) error {
		st := accessOf(d)
		if st.On[p.Ordinal()] {
			return nil
		}
		if err := rt.EnablePeerAccess(p.Ordinal()); err != nil {
			if !errors.Is(err, cudaerr.PeerAccessAlreadyEnabled) {
				return noLink(err, "EnablePeerAccess", d, p)
			}
			_ = rt.LastError() // the refusal swallowed here must not surface in a later call
		}
		st.On[p.Ordinal()] = true
		return nil
	})
}

// DisablePeerAccess stops dev's kernels accessing peer's memory directly
// (cudaDeviceDisablePeerAccess, run on dev's actor). It is idempotent: disabling access that
// is not enabled is not an error. It returns once access is disabled; work already queued
// that uses peer's memory must have completed first, or it faults. The same device twice is
// an error matching ErrNoPeerAccess.
func DisablePeerAccess(ctx context.Context, dev, peer *device.Device) error {
	d, p, err := peerPair("DisablePeerAccess", dev, peer)
	if err != nil {
		return err
	}
	return core.Do(ctx, d, func(rt backend.Device, _ *core.Tracker) error {
		// Always asked of the runtime: access may have been enabled through another handle
		// of the same GPU, which this device's record does not see.
		if err := rt.DisablePeerAccess(p.Ordinal()); err != nil {
			if !errors.Is(err, cudaerr.PeerAccessNotEnabled) {
				return noLink(err, "DisablePeerAccess", d, p)
			}
			_ = rt.LastError()
		}
		delete(accessOf(d).On, p.Ordinal())
		return nil
	})
}
