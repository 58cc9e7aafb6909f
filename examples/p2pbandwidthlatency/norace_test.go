//go:build !race

package main

// raceEnabled: the race detector is on (see TestRun).
const raceEnabled = false
