package main

import "slices"

// spread is the median, least and greatest of some values.
type spread struct {
	n                int
	median, min, max float64
}

// summarize is the spread of vs; n is 0 when vs is empty.
func summarize(vs []float64) spread {
	if len(vs) == 0 {
		return spread{}
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return spread{n: len(s), median: med, min: s[0], max: s[len(s)-1]}
}
