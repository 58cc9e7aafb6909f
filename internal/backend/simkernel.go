package backend

import "github.com/gpuactor/gpuactor/cuda"

// SimKernel is the Go implementation of a CUDA kernel, run by the simulator once per launch.
type SimKernel = cuda.SimKernel

// DeviceMemory resolves device addresses to the simulator's backing bytes.
type DeviceMemory = cuda.DeviceMemory

// KernelCall is one launch as a simulated kernel sees it.
type KernelCall = cuda.KernelCall
