package interop_test

import (
	"context"
	"fmt"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/interop"
)

// A driver function gpuactor does not wrap, called through purego: the granularity at which
// the driver maps physical memory for the virtual memory management calls. The CUmemAllocationProp
// it takes (32 bytes) is laid out by hand from cuda.h. (Not run: the simulator has no driver.)
func ExampleDriverEntryPoint() {
	ctx := context.Background()
	dev, err := device.Open(ctx, 0)
	if err != nil {
		panic(err)
	}
	defer dev.Close()

	fn, err := interop.DriverEntryPoint(ctx, dev, "cuMemGetAllocationGranularity")
	if err != nil {
		panic(err)
	}
	prop := struct {
		kind, handleTypes int32    // CU_MEM_ALLOCATION_TYPE_PINNED, no shareable handle
		locType, locID    int32    // CU_MEM_LOCATION_TYPE_DEVICE, the device's ordinal
		_                 [16]byte // win32HandleMetaData and allocFlags: zero
	}{kind: 1, locType: 1, locID: int32(dev.Ordinal())}
	var granularity uint64
	r, _, _ := purego.SyscallN(fn, uintptr(unsafe.Pointer(&granularity)), uintptr(unsafe.Pointer(&prop)), 0)
	if r != 0 {
		panic(fmt.Sprintf("cuMemGetAllocationGranularity: CUresult %d", r))
	}
	fmt.Println("granularity:", granularity)
}
