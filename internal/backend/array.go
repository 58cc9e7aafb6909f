package backend

import "github.com/gpuactor/gpuactor/cuda"

// Array is an opaque cudaArray_t handle: a CUDA array, whose layout only the device knows.
type Array uintptr

// MipmappedArray is an opaque cudaMipmappedArray_t handle: a chain of mipmap levels, each an
// Array.
type MipmappedArray uintptr

// ChannelFormat is a cudaChannelFormatDesc.
type ChannelFormat = cuda.ChannelFormat
