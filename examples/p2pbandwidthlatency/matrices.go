package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
)

// The C sample's repetitions: copies per bandwidth cell, copies per latency cell, and the ints
// a latency copy moves (one int4).
const (
	bandwidthRepeat = 5
	latencyRepeat   = 100
	latencyElems    = 4
)

// bandwidthMatrix is outputBandwidthMatrix: the unidirectional bandwidth of every pair in
// GB/s, each cell repeat copies of numElems ints (read and write counted on the diagonal).
func (b *bench) bandwidthMatrix(ctx context.Context, w io.Writer, numElems int, p2p bool, method transfer) error {
	return b.gbMatrix(ctx, w, numElems, 1, func(r *rig, i, j int) (float32, error) {
		ms, _, err := b.unidirectional(ctx, r, i, j, p2p, method, numElems, bandwidthRepeat)
		return ms, err
	})
}

// bidirectionalMatrix is outputBidirectionalBandwidthMatrix: the bandwidth of every pair
// copying both ways at once, in GB/s.
func (b *bench) bidirectionalMatrix(ctx context.Context, w io.Writer, numElems int, p2p bool) error {
	return b.gbMatrix(ctx, w, numElems, 2, func(r *rig, i, j int) (float32, error) {
		return b.bidirectional(ctx, r, i, j, p2p, numElems, bandwidthRepeat)
	})
}

// gbMatrix prints the GB/s of every pair: cell (i, j) times bandwidthRepeat copies of
// numElems ints, ways of them at once, on a rig of that many buffers a device, with
// measure's GPU milliseconds. On the diagonal a copy reads and writes one GPU's memory, so
// its bytes count twice, as the C sample counts them.
func (b *bench) gbMatrix(ctx context.Context, w io.Writer, numElems, ways int, measure func(r *rig, i, j int) (float32, error)) (err error) {
	r, err := b.newRig(ctx, numElems, ways)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, r.close(ctx)) }()
	n := len(b.devs)
	m := make([]float64, n*n)
	for i := range n {
		for j := range n {
			ms, err := measure(r, i, j)
			if err != nil {
				return err
			}
			gb := float64(ways) * float64(numElems) * 4 * bandwidthRepeat / 1e9
			if i == j {
				gb *= 2 // must count both the read and the write here
			}
			m[i*n+j] = gb / (float64(ms) / 1e3)
		}
	}
	printMatrix(w, "   D\\D", m, n)
	return nil
}

// latencyMatrix is outputLatencyMatrix: for every pair, the GPU time of one 16-byte copy
// (over 100 queued back to back) and the CPU time of queueing one, in microseconds.
func (b *bench) latencyMatrix(ctx context.Context, w io.Writer, p2p bool, method transfer) (err error) {
	r, err := b.newRig(ctx, latencyElems, 1)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, r.close(ctx)) }()
	n := len(b.devs)
	gpu, cpu := make([]float64, n*n), make([]float64, n*n)
	for i := range n {
		for j := range n {
			gpuMs, cpuMs, err := b.unidirectional(ctx, r, i, j, p2p, method, latencyElems, latencyRepeat)
			if err != nil {
				return err
			}
			gpu[i*n+j] = float64(gpuMs) * 1e3 / latencyRepeat
			cpu[i*n+j] = float64(cpuMs) * 1e3 / latencyRepeat
		}
	}
	printMatrix(w, "   GPU", gpu, n)
	fmt.Fprint(w, "\n")
	printMatrix(w, "   CPU", cpu, n)
	return nil
}

// printMatrix prints an n×n matrix as the C sample does: a corner label and the column
// numbers, then each row's number and its values.
func printMatrix(w io.Writer, corner string, m []float64, n int) {
	fmt.Fprint(w, corner)
	for j := range n {
		fmt.Fprintf(w, "%6d ", j)
	}
	fmt.Fprint(w, "\n")
	for i := range n {
		fmt.Fprintf(w, "%6d ", i)
		for j := range n {
			fmt.Fprintf(w, "%6s ", cFloat(m[i*n+j]))
		}
		fmt.Fprint(w, "\n")
	}
}

// cFloat is glibc's printf %.02f: Go's but for infinities (a cell whose time was 0) and NaN,
// which C writes as inf and nan, signed.
func cFloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	case math.IsNaN(v) && math.Signbit(v):
		return "-nan"
	case math.IsNaN(v):
		return "nan"
	}
	return fmt.Sprintf("%.02f", v)
}
