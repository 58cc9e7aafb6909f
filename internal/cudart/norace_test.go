//go:build !race

package cudart

const raceEnabled = false
