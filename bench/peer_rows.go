package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/interop"
	"github.com/gpuactor/gpuactor/streams"
)

// errSkipped: the row cannot run on this machine (it needs hardware the machine lacks); the
// run notes why and goes on without a result for it.
var errSkipped = errors.New("not run on this machine")

// peerScenarios is the peer-copy row: 1 GiB copied from the bench's device to another over
// their link (streams.Stream.Copy with buffers of two devices: cudaMemcpyPeerAsync), against
// the C++ baseline's cudaMemcpyPeerAsync of the same bytes. It counts bytes moved one way.
// It drives two devices, so it runs with the rows that use several streams.
func peerScenarios() []scenario {
	return []scenario{
		{name: "peer_copy", unit: "GB/s", size: 1 << 30, manyStreams: true, run: peerBandwidth},
	}
}

// peerDevice is the first device other than the bench's that can access its memory and whose
// memory it can access, with peer access enabled both ways; errSkipped when there is none.
func (e *env) peerDevice() (*device.Device, error) {
	all, err := e.groupDevices() // the bench's device first
	if err != nil {
		return nil, err
	}
	others := all[1:]
	if len(others) == 0 {
		return nil, fmt.Errorf("%w: peer_copy needs two GPUs; this machine has one", errSkipped)
	}
	if e.dev.Backend() == device.BackendSim {
		// The bench opens each simulated device as a machine of its own, and a peer copy
		// needs two devices of one machine: expected, not a fault.
		return nil, fmt.Errorf("%w: peer_copy runs on GPUs only (the bench simulates each device as a machine of its own)", errSkipped)
	}
	for _, p := range others {
		to, err := interop.CanAccessPeer(e.ctx, e.dev, p)
		if err != nil {
			return nil, err
		}
		from, err := interop.CanAccessPeer(e.ctx, p, e.dev)
		if err != nil {
			return nil, err
		}
		if !to || !from {
			continue
		}
		if err := interop.EnablePeerAccess(e.ctx, e.dev, p); err != nil {
			return nil, err
		}
		// Left enabled: the C++ baseline, in this process with -inprocess, enables it too.
		return p, interop.EnablePeerAccess(e.ctx, p, e.dev)
	}
	return nil, fmt.Errorf("%w: peer_copy needs two GPUs with peer access; device %d has none with another", errSkipped, e.dev.Ordinal())
}

// peerBandwidth: batches of 10 peer copies of size bytes from the bench's device to its peer,
// queued on the bench device's own stream, one Synchronize per batch; the peer's buffer is
// checked afterwards.
func peerBandwidth(e *env, size int64, repeat int) (float64, *float64, error) {
	peer, err := e.peerDevice()
	if err != nil {
		return 0, nil, err
	}
	src, err := e.dev.MallocBytes(e.ctx, uint64(size))
	if err != nil {
		return 0, nil, err
	}
	defer src.Close(e.ctx)
	dst, err := peer.MallocBytes(e.ctx, uint64(size))
	if err != nil {
		return 0, nil, err
	}
	defer dst.Close(e.ctx)
	want := make([]byte, size)
	fillPattern(want, 10)
	if err := streams.CopyToDevice(e.ctx, streams.Default(e.dev), src, want).Wait(e.ctx); err != nil {
		return 0, nil, err
	}
	if err := streams.Default(peer).Memset(e.ctx, dst, 0).Wait(e.ctx); err != nil {
		return 0, nil, err
	}
	s := streams.Default(e.dev)
	const iters = 10
	var samples []float64
	for r := -1; r < repeat; r++ {
		start := time.Now()
		for range iters {
			s.Copy(e.ctx, dst, src)
		}
		if err := s.Synchronize(e.ctx); err != nil {
			return 0, nil, err
		}
		if r >= 0 {
			samples = append(samples, float64(size)*iters/time.Since(start).Seconds()/1e9)
		}
	}
	got := make([]byte, size)
	if err := streams.CopyFromDevice(e.ctx, streams.Default(peer), got, dst).Wait(e.ctx); err != nil {
		return 0, nil, err
	}
	return median(samples), nil, checkBytes(got, want)
}
