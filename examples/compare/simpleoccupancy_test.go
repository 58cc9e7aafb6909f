package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// simpleOccupancyC is the C sample's output (H100 figures).
const simpleOccupancyC = `starting Simple Occupancy

[ Manual configuration with 32 threads per block ]
Potential occupancy: 50%
Elapsed time: 0.0512ms

[ Automatic, occupancy-based configuration ]
Suggested block size: 1024
Minimum grid size for maximum occupancy: 264
Potential occupancy: 100%
Elapsed time: 0.019456ms

Test PASSED

`

// The port prints the same lines; the two elapsed times are told apart by the heading before
// each, and the calculator's figures are results.
func TestParseSimpleOccupancy(t *testing.T) {
	results, timings := parse(byName(t, "simpleoccupancy"), simpleOccupancyC)
	assert.Equal(t, []string{
		"Potential occupancy: 50%",
		"Suggested block size: 1024",
		"Minimum grid size for maximum occupancy: 264",
		"Potential occupancy: 100%",
		"Test PASSED",
	}, results)
	assert.Equal(t, map[string]float64{"manual, 32 threads": 0.0512, "occupancy-based": 0.019456}, timings)
}
