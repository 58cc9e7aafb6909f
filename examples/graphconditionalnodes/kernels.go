package main

import (
	"fmt"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/graphs"
)

// kernelSource holds the C sample's kernels, unchanged but for extern "C" (so that gpuactor
// finds them by name), after graphs.ConditionalDecls: NVRTC has no cuda_runtime.h, which
// declares the handle type and cudaGraphSetConditional in C.
const kernelSource = graphs.ConditionalDecls + `

extern "C" __global__ void ifGraphKernelA(char *dPtr, cudaGraphConditionalHandle handle) {
    unsigned int value = *dPtr & 0x01;
    cudaGraphSetConditional(handle, value);
    printf("GPU: Handle set to %d\n", value);
}
extern "C" __global__ void ifGraphKernelC(void) { printf("GPU: Hello from the GPU! The condition was true.\n"); }
extern "C" __global__ void ifGraphKernelD(void) { printf("GPU: Hello from the GPU! The condition was false.\n"); }

extern "C" __global__ void doWhileEmptyKernel(void) { printf("GPU: doWhileEmptyKernel()\n"); }
extern "C" __global__ void doWhileLoopKernel(char *dPtr, cudaGraphConditionalHandle handle) {
    if (--(*dPtr) == 0) {
        cudaGraphSetConditional(handle, 0);
    }
    printf("GPU: counter = %d\n", *dPtr);
}

extern "C" __global__ void capturedWhileKernel(char *dPtr, cudaGraphConditionalHandle handle) {
    printf("GPU: counter = %d\n", *dPtr);
    if (*dPtr) {
        (*dPtr)--;
    }
    cudaGraphSetConditional(handle, *dPtr);
}
extern "C" __global__ void capturedWhileEmptyKernel(void) { printf("GPU: capturedWhileEmptyKernel()\n"); }

extern "C" __global__ void switchGraphKernelA(char *dPtr, cudaGraphConditionalHandle handle) {
    unsigned int value = *dPtr;
    cudaGraphSetConditional(handle, value);
    printf("GPU: Handle set to %d\n", value);
}
extern "C" __global__ void switchGraphKernelC(void) { printf("GPU: Hello from switchGraphKernelC(), running on the GPU!\n"); }
extern "C" __global__ void switchGraphKernelD(void) { printf("GPU: Hello from switchGraphKernelD(), running on the GPU!\n"); }
extern "C" __global__ void switchGraphKernelE(void) { printf("GPU: Hello from switchGraphKernelE(), running on the GPU!\n"); }
extern "C" __global__ void switchGraphKernelF(void) { printf("GPU: Hello from switchGraphKernelF(), running on the GPU!\n"); }
`

// simKernels are the kernels' Go twins for the simulator: the same arithmetic on a signed
// char, the same lines printed.
var simKernels = map[string]cuda.SimKernel{
	"ifGraphKernelA": func(c *cuda.KernelCall) error {
		value := uint32(cuda.SimSlice[uint8](c, 0, 1)[0] & 0x01)
		cuda.SimSetConditional(c, c.Handle(1), value)
		fmt.Printf("GPU: Handle set to %d\n", value)
		return nil
	},
	"ifGraphKernelC":     say("GPU: Hello from the GPU! The condition was true."),
	"ifGraphKernelD":     say("GPU: Hello from the GPU! The condition was false."),
	"doWhileEmptyKernel": say("GPU: doWhileEmptyKernel()"),
	"doWhileLoopKernel": func(c *cuda.KernelCall) error {
		p := cuda.SimSlice[int8](c, 0, 1)
		p[0]--
		if p[0] == 0 {
			cuda.SimSetConditional(c, c.Handle(1), 0)
		}
		fmt.Printf("GPU: counter = %d\n", p[0])
		return nil
	},
	"capturedWhileKernel": func(c *cuda.KernelCall) error {
		p := cuda.SimSlice[int8](c, 0, 1)
		fmt.Printf("GPU: counter = %d\n", p[0])
		if p[0] != 0 {
			p[0]--
		}
		cuda.SimSetConditional(c, c.Handle(1), uint32(int32(p[0])))
		return nil
	},
	"capturedWhileEmptyKernel": say("GPU: capturedWhileEmptyKernel()"),
	"switchGraphKernelA": func(c *cuda.KernelCall) error {
		value := uint32(int32(cuda.SimSlice[int8](c, 0, 1)[0]))
		cuda.SimSetConditional(c, c.Handle(1), value)
		fmt.Printf("GPU: Handle set to %d\n", int32(value))
		return nil
	},
	"switchGraphKernelC": say("GPU: Hello from switchGraphKernelC(), running on the GPU!"),
	"switchGraphKernelD": say("GPU: Hello from switchGraphKernelD(), running on the GPU!"),
	"switchGraphKernelE": say("GPU: Hello from switchGraphKernelE(), running on the GPU!"),
	"switchGraphKernelF": say("GPU: Hello from switchGraphKernelF(), running on the GPU!"),
}

func say(line string) cuda.SimKernel {
	return func(*cuda.KernelCall) error {
		fmt.Println(line)
		return nil
	}
}
