package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/examples/internal/sample"
	"github.com/gpuactor/gpuactor/interop"
	"github.com/gpuactor/gpuactor/streams"
)

// transfer is the direction of the copies between two GPUs, from the first GPU's stream.
type transfer int

const (
	p2pWrite transfer = iota // the first GPU's buffer into the second's
	p2pRead                  // the second GPU's buffer into the first's
)

// bench is the sample's machine: every device, the kernels loaded on each, and how copies
// between GPUs with peer access are made (--sm_copy: a kernel; else the copy engines).
type bench struct {
	devs   []*device.Device
	kerns  []kernels
	views  *sample.HostViews[int32]
	smCopy bool
	warn   io.Writer // where a measurement the delay kernel did not cover is noted
}

// canAccess is cudaDeviceCanAccessPeer(i, j); a device and itself answer no, as the runtime
// does (gpuactor's CanAccessPeer refuses the question).
func (b *bench) canAccess(ctx context.Context, i, j int) (bool, error) {
	if i == j {
		return false, nil
	}
	return interop.CanAccessPeer(ctx, b.devs[i], b.devs[j])
}

// peerAccess enables (or disables) access from i to j and from j to i, as the C sample does
// around a pair with access.
func (b *bench) peerAccess(ctx context.Context, i, j int, on bool) error {
	set := interop.DisablePeerAccess
	if on {
		set = interop.EnablePeerAccess
	}
	if err := set(ctx, b.devs[i], b.devs[j]); err != nil {
		return err
	}
	return set(ctx, b.devs[j], b.devs[i])
}

// mem is one of a rig's buffers: the object for copies, the address for the SM copy kernel.
type mem struct {
	buf *device.Buffer
	ptr cuda.DevicePtr
}

func (r *rig) buffer(d int) mem    { return mem{r.bufs[d], r.ptrs[d]} }
func (r *rig) bufferD2D(d int) mem { return mem{r.bufsD2D[d], r.ptrsD2D[d]} }

// performCopy is the C sample's performP2PCopy: repeat copies of numElems ints from src to
// dst queued on s, a stream of device sd; with --sm_copy between GPUs with peer access, as
// many launches of copyp2p on sd, else peer copies (cudaMemcpyPeerAsync; a plain device copy
// when both buffers are on sd). It returns the operations' futures.
func (b *bench) performCopy(ctx context.Context, s *streams.Stream, sd int, dst, src mem, numElems, repeat int, access bool) []actor.Waiter {
	futs := make([]actor.Waiter, 0, repeat)
	if b.smCopy && access {
		k := b.kerns[sd]
		cfg := cuda.LaunchConfig{Grid: cuda.Dim(k.blocks), Block: cuda.Dim(k.threads)}
		for range repeat {
			futs = append(futs, s.Launch(ctx, k.copyp2p, cfg, dst.ptr, src.ptr, uint64(numElems/4)))
		}
		return futs
	}
	for range repeat {
		futs = append(futs, s.Copy(ctx, dst.buf, src.buf))
	}
	return futs
}

// delay queues the delay kernel on s, a stream of device d: the stream waits for the flag.
func (b *bench) delay(ctx context.Context, r *rig, s *streams.Stream, d int) actor.Waiter {
	return s.Launch(ctx, b.kerns[d].delay, cuda.LaunchConfig{Grid: cuda.Dim(1), Block: cuda.Dim(1)}, r.flagPtrs[d], uint64(delayClocks))
}

// issued returns once every operation queued on ss so far has been handed to the runtime: a
// gpuactor operation returns as soon as its message is sent to its device's actor, where the
// C sample's calls return once the runtime has queued the work. A query of each stream, sent
// through the same actor after those operations, answers after the actor has issued them.
func issued(ctx context.Context, ss ...*streams.Stream) error {
	for _, s := range ss {
		if _, err := s.Query(ctx); err != nil {
			return err
		}
	}
	return nil
}

// noteTimeout writes a warning when queueing the experiment on device d took longer than the
// delay kernel waits: the copies then began before all were queued, and the figure measures
// the queueing too (the C sample's "unstable results").
func (b *bench) noteTimeout(d int, what string, queued time.Duration) {
	khz := b.devs[d].Properties().ClockKHz
	if khz <= 0 || b.warn == nil {
		return
	}
	timeout := time.Duration(float64(delayClocks) / float64(khz) * float64(time.Millisecond))
	if queued > timeout {
		fmt.Fprintf(b.warn, "warning: %s: queueing took %v, longer than the delay kernel's timeout (%v at %d MHz): the figure includes queueing\n",
			what, queued.Round(time.Microsecond), timeout.Round(time.Microsecond), khz/1000)
	}
}

// elapsedMs is cudaEventElapsedTime's figure: the time between the records, in milliseconds,
// as a float.
func elapsedMs(ctx context.Context, start, stop *streams.Event) (float32, error) {
	d, err := streams.Elapsed(ctx, start, stop)
	return float32(float64(d) / float64(time.Millisecond)), err
}

// unidirectional measures one cell (i, j) of a unidirectional matrix, as the C sample's
// outputBandwidthMatrix and outputLatencyMatrix do: with p2p and access between the GPUs,
// peer access enabled both ways; the delay kernel holding stream i while the start event,
// repeat copies (i to j, j to i with p2pRead, or within i on the diagonal) and the stop event
// are queued behind it; then the flag released. It returns the GPU time between the events
// and the CPU time spent queueing the copies, both in milliseconds.
func (b *bench) unidirectional(ctx context.Context, r *rig, i, j int, p2p bool, method transfer, numElems, repeat int) (gpuMs, cpuMs float32, err error) {
	access := false
	if p2p {
		if access, err = b.canAccess(ctx, i, j); err != nil {
			return 0, 0, err
		}
		if access {
			if err := b.peerAccess(ctx, i, j, true); err != nil {
				return 0, 0, err
			}
		}
	}
	s := r.streams[i][0]
	if err := s.Synchronize(ctx); err != nil {
		return 0, 0, err
	}

	// Block the stream until all the work is queued up.
	r.hold()
	began := time.Now()
	futs := []actor.Waiter{b.delay(ctx, r, s, i), s.Record(ctx, r.start[i])}
	copyStart := time.Now()
	switch {
	case i == j: // intra-GPU, D2D copies
		futs = append(futs, b.performCopy(ctx, s, i, r.buffer(i), r.bufferD2D(i), numElems, repeat, access)...)
	case method == p2pWrite:
		futs = append(futs, b.performCopy(ctx, s, i, r.buffer(j), r.buffer(i), numElems, repeat, access)...)
	default:
		futs = append(futs, b.performCopy(ctx, s, i, r.buffer(i), r.buffer(j), numElems, repeat, access)...)
	}
	if err := issued(ctx, s); err != nil {
		return 0, 0, err
	}
	cpu := time.Since(copyStart)
	futs = append(futs, s.Record(ctx, r.stop[i]))
	if err := issued(ctx, s); err != nil {
		return 0, 0, err
	}
	b.noteTimeout(i, fmt.Sprintf("GPU%d-GPU%d, %d copies", i, j, repeat), time.Since(began))

	// Release the queued operations.
	r.release()
	if err := errors.Join(s.Synchronize(ctx), actor.WaitAll(ctx, futs...)); err != nil {
		return 0, 0, err
	}
	if gpuMs, err = elapsedMs(ctx, r.start[i], r.stop[i]); err != nil {
		return 0, 0, err
	}
	if p2p && access {
		if err := b.peerAccess(ctx, i, j, false); err != nil {
			return 0, 0, err
		}
	}
	return gpuMs, float32(float64(cpu) / float64(time.Millisecond)), nil
}

// bidirectional measures one cell (i, j) of a bidirectional matrix, as the C sample's
// outputBidirectionalBandwidthMatrix does: stream0 of GPU i copies i to j while stream1 of GPU
// j copies j to i (on the diagonal, the two buffers of GPU i into each other), stream1
// starting when stream0's start event is reached and stream0's stop event recorded once
// stream1 is done too. It returns the GPU time between the events, in milliseconds.
func (b *bench) bidirectional(ctx context.Context, r *rig, i, j int, p2p bool, numElems, repeat int) (gpuMs float32, err error) {
	access := false
	if p2p {
		if access, err = b.canAccess(ctx, i, j); err != nil {
			return 0, err
		}
		if access {
			if err := b.peerAccess(ctx, i, j, true); err != nil {
				return 0, err
			}
		}
	}
	s0, s1 := r.streams[i][0], r.streams[j][1]
	if err := errors.Join(s0.Synchronize(ctx), s1.Synchronize(ctx)); err != nil {
		return 0, err
	}

	// Block the stream until all the work is queued up; stream1 waits for stream0's start.
	r.hold()
	began := time.Now()
	futs := []actor.Waiter{b.delay(ctx, r, s0, i), s0.Record(ctx, r.start[i]), s1.Wait(ctx, r.start[i])}
	if i == j {
		futs = append(futs, b.performCopy(ctx, s0, i, r.buffer(i), r.bufferD2D(i), numElems, repeat, access)...)
		futs = append(futs, b.performCopy(ctx, s1, i, r.bufferD2D(i), r.buffer(i), numElems, repeat, access)...)
	} else {
		futs = append(futs, b.performCopy(ctx, s1, j, r.buffer(i), r.buffer(j), numElems, repeat, access)...)
		futs = append(futs, b.performCopy(ctx, s0, i, r.buffer(j), r.buffer(i), numElems, repeat, access)...)
	}
	// Stream0's stop waits for stream1's: the time covers both directions.
	futs = append(futs, s1.Record(ctx, r.stop[j]), s0.Wait(ctx, r.stop[j]), s0.Record(ctx, r.stop[i]))
	if err := issued(ctx, s1, s0); err != nil {
		return 0, err
	}
	b.noteTimeout(i, fmt.Sprintf("GPU%d<->GPU%d, %d copies each way", i, j, repeat), time.Since(began))

	// Release the queued operations.
	r.release()
	if err := errors.Join(s0.Synchronize(ctx), s1.Synchronize(ctx), actor.WaitAll(ctx, futs...)); err != nil {
		return 0, err
	}
	if gpuMs, err = elapsedMs(ctx, r.start[i], r.stop[i]); err != nil {
		return 0, err
	}
	if p2p && access {
		if err := b.peerAccess(ctx, i, j, false); err != nil {
			return 0, err
		}
	}
	return gpuMs, nil
}
