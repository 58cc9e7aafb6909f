//go:build !linux

package sim

// physicalRAM is 0 off Linux: the machine's memory is not read there, and pinnedLimit falls
// back to a fixed limit.
func physicalRAM() uint64 { return 0 }
