package sample

import "math"

// CRand is rand() as glibc implements it (the additive feedback generator of random(3), in
// the state rand() starts in when srand is never called), so that a port draws the input its
// C sample draws on Linux and both print the same sums.
type CRand struct {
	state [31]uint32
	f, r  int // the two taps: state[f] += state[r]
}

// NewCRand is glibc's rand() before its first call.
func NewCRand() *CRand {
	g := &CRand{f: 3}
	// Seed 1, spread by 16807·x mod 2³¹−1, computed as glibc does on signed 32-bit words.
	g.state[0] = 1
	for i := 1; i < len(g.state); i++ {
		w := int32(g.state[i-1])
		w = 16807*(w%127773) - 2836*(w/127773)
		if w < 0 {
			w += math.MaxInt32
		}
		g.state[i] = uint32(w)
	}
	for range 10 * len(g.state) { // glibc discards the first 310 outputs
		g.Next()
	}
	return g
}

// Next is the next rand(): a number in [0, 2³¹−1].
func (g *CRand) Next() int32 {
	g.state[g.f] += g.state[g.r]
	out := int32(g.state[g.f] >> 1)
	g.f, g.r = (g.f+1)%len(g.state), (g.r+1)%len(g.state)
	return out
}
