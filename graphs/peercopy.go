package graphs

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
)

// AddCopyPeer adds a copy of all of src into the start of dst where one of the two is memory
// of g's device and the other memory of another device of the same machine: a copy node
// with unified addressing (cudaMemcpyDefault), run by g's device. g's device must have peer
// access to the other (interop.EnablePeerAccess), else the error matches
// interop.ErrNoPeerAccess and names both devices. The other device's buffer is checked and
// held on its own actor before the node is added, and stays held while g, its clones or
// executable graphs made from them exist: a Close of it waits until they are all closed.
func (g *Graph) AddCopyPeer(ctx context.Context, deps Deps, dst, src device.Mem) (*Node, error) {
	if g == nil {
		return nil, invalid("nil graph")
	}
	local := coreDev(g.dev)
	dstDev, err := core.Owner("copy destination", dst)
	if err != nil {
		return nil, err
	}
	srcDev, err := core.Owner("copy source", src)
	if err != nil {
		return nil, err
	}
	var (
		foreign  device.Mem
		what     string
		other    *core.Device
		fromPeer = dstDev == local && srcDev != local
	)
	switch {
	case fromPeer:
		foreign, what, other = src, "copy source", srcDev
	case srcDev == local && dstDev != local:
		foreign, what, other = dst, "copy destination", dstDev
	case srcDev == local:
		return nil, invalid("AddCopyPeer between two buffers of device %d: use AddCopy", local.Ordinal())
	default:
		return nil, fmt.Errorf("%w: a copy from device %d to device %d in a graph of device %d: the graph must belong to one of the two",
			core.ErrWrongDevice, srcDev.Ordinal(), dstDev.Ordinal(), local.Ordinal())
	}
	if !core.SameMachine(local, other) {
		return nil, invalid("AddCopyPeer: device %d (%s) and device %d (%s) belong to different backends",
			local.Ordinal(), local.BackendName(), other.Ordinal(), other.BackendName())
	}
	fp, fn, release, err := core.HoldForPeer(ctx, what, foreign)
	if err != nil {
		return nil, err
	}
	localMem, localWhat := src, "copy source"
	label := fmt.Sprintf("to device %d", other.Ordinal())
	if fromPeer {
		localMem, localWhat = dst, "copy destination"
		label = fmt.Sprintf("from device %d", other.Ordinal())
	}
	// The hold passes to the graph once the node is added; until then it is given back by
	// whichever of the op and this goroutine sees it unclaimed (the op may run after a caller
	// who stopped waiting, or never).
	var state atomic.Int32 // 0: unclaimed; 1: the op has it
	n, err := g.add(ctx, deps, CopyNode, label, nil, func(rt backend.Device, hs []backend.GraphNode) (backend.GraphNode, error) {
		if !state.CompareAndSwap(0, 1) {
			return 0, context.Canceled
		}
		h, err := addPeerCopy(rt, g, hs, local, other, localWhat, localMem, fromPeer, fp, fn)
		if err != nil {
			release()
			return 0, err
		}
		g.res.peers = append(g.res.peers, release)
		return h, nil
	})
	if state.CompareAndSwap(0, 2) {
		release()
	}
	return n, err
}

// addPeerCopy checks peer access and the local side, then adds the copy node; on the actor
// thread.
func addPeerCopy(rt backend.Device, g *Graph, hs []backend.GraphNode, local, other *core.Device, what string, m device.Mem,
	fromPeer bool, fp cuda.DevicePtr, fn uint64) (backend.GraphNode, error) {
	if !local.PeerAccess().On[other.Ordinal()] {
		return 0, fmt.Errorf("%w: device %d has no peer access to device %d: enable it with interop.EnablePeerAccess",
			core.ErrNoPeerAccess, local.Ordinal(), other.Ordinal())
	}
	lp, ln, err := local.Resolve(what, m)
	if err != nil {
		return 0, err
	}
	p := backend.CopyNode{Dst: uint64(lp), Src: uint64(fp), Bytes: fn, Kind: backend.CopyDefault}
	dn := ln
	if !fromPeer {
		p = backend.CopyNode{Dst: uint64(fp), Src: uint64(lp), Bytes: ln, Kind: backend.CopyDefault}
		dn = fn
	}
	if p.Bytes > dn {
		return 0, core.OutOfRange("copy of %d bytes into a %d-byte destination", p.Bytes, dn)
	}
	return rt.GraphAddMemcpyNode1D(g.h, hs, p)
}
