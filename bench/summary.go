package main

// Summary is one cell group of the GPU table as -json and -save write it: an implementation's
// figure for one of gpuactor's rows (its p50 or p99 where the row has a tail), the median over
// its rounds or passes, and the median and range of its per-round ratios to C++. gpuactor's
// ratios are to the C++ passes around each round; the Python peers' to the C++ pass of the
// same pass.
type Summary struct {
	Scenario string  `json:"scenario"` // gpuactor's row
	Size     int64   `json:"size,omitempty"`
	Stat     string  `json:"stat,omitempty"` // p50 or p99 for rows with a tail
	Impl     string  `json:"impl"`           // gpuactor, cupy or cuda.core
	Unit     string  `json:"unit"`
	Value    float64 `json:"value"`
	// Ratio is the median of the per-round ratios to C++, RatioLo and RatioHi their range,
	// over Ratios rounds; absent where there was no C++ figure to divide by.
	Ratio   *float64 `json:"ratio,omitempty"`
	RatioLo *float64 `json:"ratio_lo,omitempty"`
	RatioHi *float64 `json:"ratio_hi,omitempty"`
	Ratios  int      `json:"ratios,omitempty"`
	// Over is, for gpuactor's entries, its figure over each Python peer's that ran the row:
	// per round over the peer's passes around it, the median and range.
	Over map[string]PeerRatio `json:"over,omitempty"`
}

// PeerRatio is gpuactor's figure over a peer's: the median of the per-round ratios, their
// range, and over how many rounds (0: the rows ran once, and Median is over the peer's mean).
type PeerRatio struct {
	Median float64 `json:"median"`
	Lo     float64 `json:"lo"`
	Hi     float64 `json:"hi"`
	Rounds int     `json:"rounds,omitempty"`
}

// summarize is the GPU table's figures: for each of gpuactor's rows on the cuda backend,
// gpuactor's and each Python peer's that ran it.
func summarize(rep *Report) []Summary {
	var out []Summary
	for _, r := range collapseRounds(rep.Results) {
		if r.Impl != "gpuactor" || r.Backend != "cuda" || !r.Checked {
			continue
		}
		for _, row := range expand(r) {
			stat := ""
			if r.P99 != nil {
				stat = "p50"
				if row.p99 {
					stat = "p99"
				}
			}
			s := Summary{Scenario: r.Scenario, Size: r.Size, Stat: stat, Impl: "gpuactor", Unit: r.Unit, Value: row.value}
			if med, lo, hi, ok := roundRatios(rep, r, row.p99); ok {
				s.Ratio, s.RatioLo, s.RatioHi, s.Ratios = &med, &lo, &hi, r.rounds
			} else if cpp := lookup(rep, "cpp", r, row.p99); cpp != nil && *cpp > 0 {
				v := row.value / *cpp
				s.Ratio = &v
			}
			for _, impl := range peerImpls {
				if med, lo, hi, n, ok := overPeer(rep, impl, r, row.value, row.p99); ok {
					if s.Over == nil {
						s.Over = map[string]PeerRatio{}
					}
					s.Over[impl] = PeerRatio{Median: med, Lo: lo, Hi: hi, Rounds: n}
				}
			}
			out = append(out, s)
			for _, impl := range peerImpls {
				f, ok := peerOf(rep, impl, r, row.p99)
				if !ok {
					continue
				}
				p := Summary{Scenario: r.Scenario, Size: r.Size, Stat: stat, Impl: impl, Unit: r.Unit, Value: f.value}
				if f.ratios > 0 {
					p.Ratio, p.RatioLo, p.RatioHi, p.Ratios = &f.ratio, &f.lo, &f.hi, f.ratios
				}
				out = append(out, p)
			}
		}
	}
	return out
}
