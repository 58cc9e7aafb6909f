package cuda

import (
	"fmt"
	"math"
	"unsafe"
)

// SimKernel is the Go implementation of a CUDA kernel, which the simulator runs in its place:
// once per launch (not once per thread), when the stream reaches the launch, looping over the
// grid itself (usually up to KernelCall.Threads). Returning an error or panicking (SimSlice
// past an allocation's end, say) is a device fault: the simulated device fails with a sticky
// error, as a real one would.
type SimKernel func(c *KernelCall) error

// DeviceMemory resolves device addresses to the bytes that back them on the simulator.
type DeviceMemory interface {
	// Bytes returns the n bytes at p, or an error when [p, p+n) is not inside one live
	// allocation of this device.
	Bytes(p DevicePtr, n uint64) ([]byte, error)
	// Extent returns how many bytes of its allocation lie at and after p.
	Extent(p DevicePtr) (uint64, error)
}

// KernelCall is one launch as a SimKernel sees it: its shape, its arguments (read them by
// index with Int32, Float32, Ptr…) and the device's memory. A read of the wrong kind, or of an
// argument the launch does not have, panics: a fault of the kernel.
type KernelCall struct {
	Grid, Block Dim3
	SharedMem   uint32
	Args        []Arg
	Mem         DeviceMemory
	// Globals finds the variables of the kernel's module (read them with SimGlobal).
	Globals SimGlobals
	// Conditionals sets the conditional variables of the graph launch the kernel runs in
	// (SimSetConditional); nil outside a graph launch.
	Conditionals SimConditionals
	// Textures samples the device's texture objects and reaches its surface objects (use
	// SimTex2D, SimSurf2DWrite... with an argument read by TextureArg or SurfaceArg).
	Textures SimTextures
}

// Threads is the total number of threads of the launch (grid × block).
func (c *KernelCall) Threads() uint64 { return c.Grid.Count() * c.Block.Count() }

func (c *KernelCall) arg(i int, want ArgKind) uint64 {
	if i < 0 || i >= len(c.Args) {
		panic(fmt.Sprintf("sim kernel: argument %d requested, launch has %d", i, len(c.Args)))
	}
	if c.Args[i].Kind != want {
		panic(fmt.Sprintf("sim kernel: argument %d is %s, read as %s", i, c.Args[i].Kind, want))
	}
	return c.Args[i].Bits
}

// Int32 is argument i as an int32.
func (c *KernelCall) Int32(i int) int32 { return int32(uint32(c.arg(i, Int32))) }

// Uint32 is argument i as a uint32.
func (c *KernelCall) Uint32(i int) uint32 { return uint32(c.arg(i, Uint32)) }

// Int64 is argument i as an int64.
func (c *KernelCall) Int64(i int) int64 { return int64(c.arg(i, Int64)) }

// Uint64 is argument i as a uint64.
func (c *KernelCall) Uint64(i int) uint64 { return c.arg(i, Uint64) }

// Float32 is argument i as a float32.
func (c *KernelCall) Float32(i int) float32 { return math.Float32frombits(uint32(c.arg(i, Float32))) }

// Float64 is argument i as a float64.
func (c *KernelCall) Float64(i int) float64 { return math.Float64frombits(c.arg(i, Float64)) }

// TextureArg is argument i as a texture object.
func (c *KernelCall) TextureArg(i int) TextureObject { return TextureObject(c.arg(i, Texture)) }

// SurfaceArg is argument i as a surface object.
func (c *KernelCall) SurfaceArg(i int) SurfaceObject { return SurfaceObject(c.arg(i, Surface)) }

// Ptr is argument i as a device address.
func (c *KernelCall) Ptr(i int) DevicePtr { return DevicePtr(c.arg(i, Pointer)) }

// SimSlice views n elements of type T at the device address in argument i of a simulated
// launch. It panics (which the simulator reports as a launch failure) when the elements run
// past the allocation, as an out-of-bounds access would fault on a GPU.
func SimSlice[T any](c *KernelCall, i int, n int) []T {
	var zero T
	size := uint64(unsafe.Sizeof(zero))
	if n < 0 {
		panic(fmt.Sprintf("sim kernel: negative length %d for argument %d", n, i))
	}
	b, err := c.Mem.Bytes(c.Ptr(i), uint64(n)*size)
	if err != nil {
		panic(fmt.Sprintf("sim kernel: argument %d: %v", i, err))
	}
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), n)
}
