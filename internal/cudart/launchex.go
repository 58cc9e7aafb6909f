package cudart

import (
	"errors"
	"runtime"
	"sync"
	"unsafe"

	"github.com/gpuactor/gpuactor/internal/backend"
)

// cuLaunchConfig is the driver's CUlaunchConfig (56 bytes): six unsigned extents and the
// shared memory size, padding, the stream, the attribute array and its length.
type cuLaunchConfig struct {
	grid, block [3]uint32
	sharedMem   uint32
	_           uint32
	stream      uintptr
	attrs       uintptr
	numAttrs    uint32
	_           uint32
}

// rtLaunchConfig is the runtime's cudaLaunchConfig_t (56 bytes): two dim3, a size_t shared
// memory size, the stream, the attribute array and its length.
type rtLaunchConfig struct {
	grid, block [3]uint32
	sharedMem   uint64
	stream      uintptr
	attrs       uintptr
	numAttrs    uint32
	_           uint32
}

// launchAttr is cudaLaunchAttribute and CUlaunchAttribute alike (72 bytes in 12.0+): the id,
// padding to 8 bytes and a 64-byte value union.
type launchAttr struct {
	id  uint32
	_   uint32
	val [8]uint64
}

// cudaLaunchAttributeID values (the driver's CUlaunchAttributeID has the same).
const (
	launchAttrCooperative               = 2
	launchAttrClusterDimension          = 4
	launchAttrClusterSchedulingPolicy   = 5
	launchAttrProgrammaticSerialization = 6
	launchAttrProgrammaticEvent         = 7
	launchAttrPriority                  = 8
	launchAttrMemSyncDomain             = 10
)

// maxLaunchAttrs is how many attributes LaunchAttrs can give.
const maxLaunchAttrs = 7

// launchFrame holds one extended launch's structures in one heap object, so that the
// pointers inside them stay valid for the call: the Go heap does not move objects, where a
// goroutine's stack may. Frames come from launchFrames, which only holds heap objects.
type launchFrame struct {
	drv   cuLaunchConfig
	rt    rtLaunchConfig
	attrs [maxLaunchAttrs]launchAttr
	n     uint32
}

var launchFrames = sync.Pool{New: func() any { return new(launchFrame) }}

func getLaunchFrame() *launchFrame  { return launchFrames.Get().(*launchFrame) }
func putLaunchFrame(f *launchFrame) { launchFrames.Put(f) }

// set fills the frame for a launch of grid × block with sharedMem bytes on s and attrs.
func (f *launchFrame) set(grid, block Dim3, sharedMem uint32, s Stream, a backend.LaunchAttrs) {
	f.n = 0
	add := func(id uint32, w0, w1 uint64) {
		f.attrs[f.n] = launchAttr{id: id, val: [8]uint64{w0, w1}}
		f.n++
	}
	if a.Cooperative {
		add(launchAttrCooperative, 1, 0)
	}
	if a.Cluster != (Dim3{}) {
		add(launchAttrClusterDimension, uint64(a.Cluster.X)|uint64(a.Cluster.Y)<<32, uint64(a.Cluster.Z))
	}
	if a.ClusterScheduling != 0 {
		add(launchAttrClusterSchedulingPolicy, uint64(a.ClusterScheduling), 0)
	}
	if a.ProgrammaticSerialization {
		add(launchAttrProgrammaticSerialization, 1, 0)
	}
	if a.ProgrammaticEvent != 0 {
		// {cudaEvent_t event; int flags; int triggerAtBlockStart}: flags 0, trigger when
		// every block has triggered or finished.
		add(launchAttrProgrammaticEvent, uint64(a.ProgrammaticEvent), 0)
	}
	if a.Priority != 0 {
		add(launchAttrPriority, uint64(uint32(a.Priority)), 0)
	}
	if a.MemSyncDomain != 0 {
		add(launchAttrMemSyncDomain, uint64(a.MemSyncDomain), 0)
	}
	var attrs uintptr
	if f.n > 0 {
		attrs = uintptr(unsafe.Pointer(&f.attrs[0]))
	}
	f.drv = cuLaunchConfig{grid: [3]uint32{grid.X, grid.Y, grid.Z}, block: [3]uint32{block.X, block.Y, block.Z},
		sharedMem: sharedMem, stream: uintptr(s), attrs: attrs, numAttrs: f.n}
	f.rt = rtLaunchConfig{grid: f.drv.grid, block: f.drv.block, sharedMem: uint64(sharedMem),
		stream: uintptr(s), attrs: attrs, numAttrs: f.n}
}

// LaunchKernelEx enqueues k on s with launch attributes: cuLaunchKernelEx(&CUlaunchConfig,
// k.Func, args, nil) for a kernel with a CUfunction, else cudaLaunchKernelExC(&cudaLaunchConfig_t,
// k, args). A driver without cuLaunchKernelEx (before 12.0) still runs a launch whose only
// attribute is Cooperative, through cuLaunchCooperativeKernel.
func (r *Runtime) LaunchKernelEx(k Kernel, grid, block Dim3, sharedMem uint32, s Stream, args []unsafe.Pointer, a backend.LaunchAttrs) error {
	f := getLaunchFrame()
	defer putLaunchFrame(f)
	f.set(grid, block, sharedMem, s, a)
	argv := unsafe.Pointer(unsafe.SliceData(args))
	var err error
	switch {
	case k.Func != 0:
		err = r.driverCall(drvLaunchKernelEx, uintptr(unsafe.Pointer(&f.drv)), k.Func, uintptr(argv), 0)
		var se *SymbolError
		if errors.As(err, &se) && a == (backend.LaunchAttrs{Cooperative: true}) {
			err = r.driverCall(drvLaunchCooperativeKernel, k.Func, uintptr(grid.X), uintptr(grid.Y), uintptr(grid.Z),
				uintptr(block.X), uintptr(block.Y), uintptr(block.Z), uintptr(sharedMem), uintptr(s), uintptr(argv))
		}
	case k.API == LibraryAPI:
		err = r.call(fnLaunchKernelExC, uintptr(unsafe.Pointer(&f.rt)), k.Handle, uintptr(argv))
	default:
		return r.newError("cudaLaunchKernelExC", codeInvalidResourceHandle)
	}
	runtime.KeepAlive(f)
	runtime.KeepAlive(args)
	return err
}

func (d *device) LaunchEx(k backend.Kernel, grid, block backend.Dim3, sharedMem uint32, s Stream, args []backend.Arg, a backend.LaunchAttrs) error {
	kern, err := d.kernel("cudaLaunchKernelExC", k)
	if err != nil {
		return err
	}
	d.args.Reset()
	for _, x := range args {
		d.args.Add(argBits(x))
	}
	return d.rt.LaunchKernelEx(kern, grid, block, sharedMem, s, d.args.Pointers(), a)
}
