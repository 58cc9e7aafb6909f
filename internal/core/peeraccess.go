package core

import (
	"context"
	"errors"

	"github.com/gpuactor/gpuactor/cuda"
)

// ErrNoPeerAccess: two devices cannot access each other's memory directly, or access is not
// enabled where an operation needs it (interop.ErrNoPeerAccess is this error).
var ErrNoPeerAccess = errors.New("gpuactor/interop: no peer access between the devices")

// PeerAccess is the peers a device has enabled access to through gpuactor
// (interop.EnablePeerAccess), by ordinal. Actor thread only, so that enabling access once
// done costs a message and no runtime call.
type PeerAccess struct{ On map[int]bool }

type peerAccessKey struct{}

// PeerAccess is d's record of enabled peer access; on the actor thread.
func (d *Device) PeerAccess() *PeerAccess {
	return d.Ext(peerAccessKey{}, func() any { return &PeerAccess{On: map[int]bool{}} }).(*PeerAccess)
}

// HoldForPeer checks m on its own device's actor and holds it there for work of another
// device that uses it (a copy, a graph's copy node): a Close of it waits until release is
// called (from any goroutine, once).
func HoldForPeer(ctx context.Context, what string, m Mem) (p cuda.DevicePtr, n uint64, release func(), err error) {
	return holdForPeer(ctx, what, m)
}
