package cuda

import (
	"fmt"
	"unsafe"
)

// SimGlobals finds the __device__ and __constant__ variables of the module a simulated kernel
// belongs to, as device code names them.
type SimGlobals interface {
	// Global is the device address and size in bytes of the variable name, or an error naming
	// it when the module declares no such variable.
	Global(name string) (DevicePtr, uint64, error)
}

// SimGlobal views the module variable name (declared for the simulator in the module's
// SimGlobals) as elements of type T, as device code reads and writes a __device__ or
// __constant__ variable. It panics (a launch failure on the simulator) when the module has no
// such variable or its size is not a whole number of T.
func SimGlobal[T any](c *KernelCall, name string) []T {
	var zero T
	size := uint64(unsafe.Sizeof(zero))
	if c.Globals == nil {
		panic(fmt.Sprintf("sim kernel: global %q: the launch has no module globals", name))
	}
	p, n, err := c.Globals.Global(name)
	if err != nil {
		panic(fmt.Sprintf("sim kernel: %v", err))
	}
	if size == 0 || n%size != 0 {
		panic(fmt.Sprintf("sim kernel: global %q is %d bytes, not a whole number of %d-byte elements", name, n, size))
	}
	b, err := c.Mem.Bytes(p, n)
	if err != nil {
		panic(fmt.Sprintf("sim kernel: global %q: %v", name, err))
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), n/size)
}
