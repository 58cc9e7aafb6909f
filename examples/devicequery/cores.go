package main

import (
	"fmt"
	"io"

	"github.com/gpuactor/gpuactor/device"
)

// smCores is how many CUDA cores (FP32 lanes) one multiprocessor of each architecture has,
// by compute capability, oldest first: the figures NVIDIA's samples use.
var smCores = []struct {
	cc    device.ComputeCapability
	cores int
}{
	{device.ComputeCapability{Major: 3, Minor: 0}, 192}, // Kepler
	{device.ComputeCapability{Major: 3, Minor: 2}, 192},
	{device.ComputeCapability{Major: 3, Minor: 5}, 192},
	{device.ComputeCapability{Major: 3, Minor: 7}, 192},
	{device.ComputeCapability{Major: 5, Minor: 0}, 128}, // Maxwell
	{device.ComputeCapability{Major: 5, Minor: 2}, 128},
	{device.ComputeCapability{Major: 5, Minor: 3}, 128},
	{device.ComputeCapability{Major: 6, Minor: 0}, 64}, // Pascal
	{device.ComputeCapability{Major: 6, Minor: 1}, 128},
	{device.ComputeCapability{Major: 6, Minor: 2}, 128},
	{device.ComputeCapability{Major: 7, Minor: 0}, 64}, // Volta
	{device.ComputeCapability{Major: 7, Minor: 2}, 64},
	{device.ComputeCapability{Major: 7, Minor: 5}, 64}, // Turing
	{device.ComputeCapability{Major: 8, Minor: 0}, 64}, // Ampere
	{device.ComputeCapability{Major: 8, Minor: 6}, 128},
	{device.ComputeCapability{Major: 8, Minor: 7}, 128},
	{device.ComputeCapability{Major: 8, Minor: 9}, 128},  // Ada
	{device.ComputeCapability{Major: 9, Minor: 0}, 128},  // Hopper
	{device.ComputeCapability{Major: 10, Minor: 0}, 128}, // Blackwell
	{device.ComputeCapability{Major: 10, Minor: 1}, 128},
	{device.ComputeCapability{Major: 10, Minor: 3}, 128},
	{device.ComputeCapability{Major: 11, Minor: 0}, 128},
	{device.ComputeCapability{Major: 12, Minor: 0}, 128},
	{device.ComputeCapability{Major: 12, Minor: 1}, 128},
}

// coresPerSM looks cc up in smCores. For an architecture the table does not know it says so
// on w, as the C sample does, and answers the newest architecture's figure (known false).
func coresPerSM(w io.Writer, cc device.ComputeCapability) (cores int, known bool) {
	for _, e := range smCores {
		if e.cc == cc {
			return e.cores, true
		}
	}
	last := smCores[len(smCores)-1].cores
	fmt.Fprintf(w, "MapSMtoCores for SM %d.%d is undefined.  Default to use %d Cores/SM\n", cc.Major, cc.Minor, last)
	return last, false
}
