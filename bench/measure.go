package main

import (
	"math"
	"slices"
)

// median of xs (xs is reordered).
func median(xs []float64) float64 { return percentile(xs, 50) }

// percentile p (0–100) of xs by nearest rank (xs is reordered).
func percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	slices.Sort(xs)
	i := int(math.Ceil(p/100*float64(len(xs)))) - 1
	return xs[min(max(i, 0), len(xs)-1)]
}

// fillPattern writes bytes that depend on their index and seed and are never all zero, so an
// unwritten or misplaced byte shows in the check.
func fillPattern(b []byte, seed int) {
	for i := range b {
		b[i] = byte(i*131 + seed | 1)
	}
}

// clampIters is how many copies of size bytes make one timed batch: about 256 MiB, at least
// 4 and at most 1000.
func clampIters(size int64) int {
	return int(min(max((256<<20)/max(size, 1), 4), 1000))
}
