//go:build race

package main

// raceOn: the race detector drops sync.Pool items at random, so garbage counts do not hold.
const raceOn = true
