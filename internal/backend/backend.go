// Package backend defines the interface the device actor drives: one implementation calls the
// real CUDA runtime (internal/cudart), the other simulates it in Go (internal/sim).
//
// Threading contract: a Backend is shared by every device of the process. Backend.Open is
// called on a device actor's locked OS thread, and the Device it returns is only ever called
// from that thread. Implementations need not make one Device safe for concurrent use; they
// must let different devices' threads work concurrently.
//
// Every method that fails returns an error that wraps a cudaerr.Code, so callers can use
// errors.Is(err, cudaerr.X) whatever the backend.
//
// The isolated device's wire code (internal/remote) is generated from Device's method set.
// Two lines in a method's doc comment tell it what the signature does not: //remote:posted
// marks a stream-ordered operation whose error may surface on a later call of its stream, so
// it is sent without waiting for an answer; //remote:inline marks a method whose results hold
// even when it fails, so they cross together with its error.
package backend

import (
	"unsafe"

	"github.com/gpuactor/gpuactor/cuda"
)

// DevicePtr is an address in a device's memory space (a CUdeviceptr).
type DevicePtr = cuda.DevicePtr

// Stream is an opaque cudaStream_t handle. Zero is never handed out by a backend.
type Stream uintptr

// Event is an opaque cudaEvent_t handle.
type Event uintptr

// Module is an opaque loaded module (cudaLibrary_t or CUmodule).
type Module uintptr

// Kernel is an opaque launchable function (cudaKernel_t or CUfunction).
type Kernel uintptr

// Dim3 is a grid or block shape.
type Dim3 = cuda.Dim3

// Stream creation flags (cudaStreamDefault, cudaStreamNonBlocking).
const (
	StreamDefault     uint32 = 0
	StreamNonBlocking uint32 = 1
)

// Event creation flags.
const (
	EventDefault       uint32 = 0
	EventBlockingSync  uint32 = 1
	EventDisableTiming uint32 = 2
	EventInterprocess  uint32 = 4
)

// cudaHostAlloc flags.
const (
	HostAllocDefault       uint32 = 0
	HostAllocPortable      uint32 = 1
	HostAllocMapped        uint32 = 2
	HostAllocWriteCombined uint32 = 4
)

// cudaHostRegister flags.
const (
	HostRegisterDefault  uint32 = 0
	HostRegisterPortable uint32 = 1
	HostRegisterMapped   uint32 = 2
	HostRegisterIoMemory uint32 = 4
	HostRegisterReadOnly uint32 = 8
)

// Attr is a cudaDeviceAttr value (identical in every runtime from 11.4 to 13.0).
type Attr int32

// The device attributes gpuactor reads.
const (
	AttrMaxThreadsPerBlock           Attr = 1
	AttrMaxBlockDimX                 Attr = 2
	AttrMaxBlockDimY                 Attr = 3
	AttrMaxBlockDimZ                 Attr = 4
	AttrMaxGridDimX                  Attr = 5
	AttrMaxGridDimY                  Attr = 6
	AttrMaxGridDimZ                  Attr = 7
	AttrMaxSharedMemoryPerBlock      Attr = 8
	AttrTotalConstantMemory          Attr = 9
	AttrWarpSize                     Attr = 10
	AttrMaxPitch                     Attr = 11 // bytes
	AttrMaxRegistersPerBlock         Attr = 12
	AttrClockRate                    Attr = 13 // kHz
	AttrTextureAlignment             Attr = 14 // bytes
	AttrGPUOverlap                   Attr = 15
	AttrMultiProcessorCount          Attr = 16
	AttrKernelExecTimeout            Attr = 17
	AttrIntegrated                   Attr = 18
	AttrCanMapHostMemory             Attr = 19
	AttrComputeMode                  Attr = 20
	AttrMaxTexture1DWidth            Attr = 21
	AttrMaxTexture2DWidth            Attr = 22
	AttrMaxTexture2DHeight           Attr = 23
	AttrMaxTexture3DWidth            Attr = 24
	AttrMaxTexture3DHeight           Attr = 25
	AttrMaxTexture3DDepth            Attr = 26
	AttrMaxTexture2DLayeredWidth     Attr = 27
	AttrMaxTexture2DLayeredHeight    Attr = 28
	AttrMaxTexture2DLayeredLayers    Attr = 29
	AttrSurfaceAlignment             Attr = 30 // bytes
	AttrConcurrentKernels            Attr = 31
	AttrECCEnabled                   Attr = 32
	AttrPCIBusID                     Attr = 33
	AttrPCIDeviceID                  Attr = 34
	AttrTCCDriver                    Attr = 35
	AttrMemoryClockRate              Attr = 36 // kHz
	AttrGlobalMemoryBusWidth         Attr = 37 // bits
	AttrL2CacheSize                  Attr = 38
	AttrMaxThreadsPerMultiProcessor  Attr = 39
	AttrAsyncEngineCount             Attr = 40
	AttrUnifiedAddressing            Attr = 41
	AttrMaxTexture1DLayeredWidth     Attr = 42
	AttrMaxTexture1DLayeredLayers    Attr = 43
	AttrPCIDomainID                  Attr = 50
	AttrComputeCapabilityMajor       Attr = 75
	AttrComputeCapabilityMinor       Attr = 76
	AttrStreamPrioritiesSupported    Attr = 78
	AttrMaxSharedMemoryPerSM         Attr = 81 // bytes
	AttrManagedMemory                Attr = 83
	AttrIsMultiGpuBoard              Attr = 84
	AttrConcurrentManagedAccess      Attr = 89
	AttrComputePreemptionSupported   Attr = 90
	AttrCooperativeLaunch            Attr = 95
	AttrMaxSharedMemoryPerBlockOptin Attr = 97
	AttrMaxBlocksPerMultiprocessor   Attr = 106
	AttrReservedSharedMemoryPerBlock Attr = 111 // bytes the driver keeps in each block's shared memory
	AttrMemoryPoolsSupported         Attr = 115
)

// ArgKind is the type of one kernel argument.
type ArgKind = cuda.ArgKind

// Kernel argument kinds.
const (
	ArgInt32   = cuda.Int32
	ArgUint32  = cuda.Uint32
	ArgInt64   = cuda.Int64
	ArgUint64  = cuda.Uint64
	ArgFloat32 = cuda.Float32
	ArgFloat64 = cuda.Float64
	ArgPtr     = cuda.Pointer
)

// Arg is one kernel argument: its kind and its bits.
type Arg = cuda.Arg

// ImageKind says what a module image holds.
type ImageKind uint8

// Image kinds.
const (
	ImagePTX   ImageKind = iota + 1 // NUL-terminated or not: backends add the terminator
	ImageCubin                      // an ELF cubin or fatbin
)

// ModuleSpec is what LoadModule loads: the compiled image for the real runtime, and the Go
// implementations of the kernels for the simulator. A backend uses the part it understands.
type ModuleSpec struct {
	Image     []byte
	ImageKind ImageKind
	// SimKernels maps kernel names to their Go implementations (used by the simulator only).
	SimKernels map[string]SimKernel
	// SimGlobals maps the names of the module's __device__ and __constant__ variables to
	// their initial bytes, whose length is the variable's size (used by the simulator only).
	SimGlobals map[string][]byte
}

// Backend is a CUDA runtime: the real one or the simulator. Its methods are safe to call from
// any goroutine.
type Backend interface {
	// Name is "cuda" or "sim".
	Name() string
	// RuntimeVersion is the runtime's version, e.g. 13000 for 13.0.
	RuntimeVersion() (int, error)
	// DriverVersion is the driver's version (0 when no driver is installed).
	DriverVersion() (int, error)
	// DeviceCount is the number of usable devices.
	DeviceCount() (int, error)
	// Open makes ordinal current on the calling OS thread, initializes its primary context and
	// returns the device-scoped API. The actor calls it once, on its locked thread, and calls
	// the returned Device from that thread only.
	Open(ordinal int) (Device, error)
	// Health is device ordinal's failure state, shared by every handle opened on it.
	Health(ordinal int) *Health
}

// Device is the runtime API scoped to one device. Handles (streams, events, modules) are
// unique across the whole Backend, so one device may name another device's event.
type Device interface {
	AllocDevice
	MemRangeDevice
	GraphDevice
	IPCDevice
	PeerDevice
	RawDevice
	ExternalDevice
	PitchedDevice
	ArrayDevice
	DeviceManagement
	LaunchControl
	StreamControl
	ModuleGlobals
	HostMemoryFlags
	BatchCopier
	TextureObjects
	CollectiveDevice
	GraphicsDevice

	// Ordinal is the device's index.
	Ordinal() int
	// Name is the device's marketing name.
	Name() (string, error)
	// Attribute reads one cudaDeviceAttr.
	Attribute(attr Attr) (int, error)
	// PCIBusID is the device's PCI address, e.g. "0000:65:00.0".
	PCIBusID() (string, error)
	// MemInfo is the device's free and total memory in bytes.
	MemInfo() (free, total uint64, err error)
	// Synchronize waits for all work on the device.
	Synchronize() error
	// StreamPriorityRange is the (least, greatest) stream priority; greatest is numerically lower.
	StreamPriorityRange() (least, greatest int, err error)
	// LastError returns and clears the runtime's last error (cudaGetLastError).
	LastError() error

	// Malloc allocates device memory.
	Malloc(size uint64) (DevicePtr, error)
	// Free releases device memory.
	Free(p DevicePtr) error
	// HostAlloc allocates page-locked host memory (flags: HostAlloc*).
	HostAlloc(size uint64, flags uint32) (unsafe.Pointer, error)
	// HostFree releases memory from HostAlloc.
	HostFree(p unsafe.Pointer) error
	// HostRegister page-locks existing host memory (flags: HostRegister*).
	HostRegister(p unsafe.Pointer, size uint64, flags uint32) error
	// HostUnregister undoes HostRegister.
	HostUnregister(p unsafe.Pointer) error

	// CopyHtoD copies n bytes from host memory to the device, ordered on s. With pageable host
	// memory the call returns once the source has been consumed.
	//remote:posted
	CopyHtoD(dst DevicePtr, src unsafe.Pointer, n uint64, s Stream) error
	// CopyDtoH copies n bytes from the device to host memory, ordered on s.
	//remote:posted
	CopyDtoH(dst unsafe.Pointer, src DevicePtr, n uint64, s Stream) error
	// CopyDtoD copies n bytes between device addresses, ordered on s.
	//remote:posted
	CopyDtoD(dst, src DevicePtr, n uint64, s Stream) error
	// Memset sets n bytes at p to value, ordered on s.
	//remote:posted
	Memset(p DevicePtr, value byte, n uint64, s Stream) error

	// StreamCreate creates a stream (flags: Stream*; priority within StreamPriorityRange).
	StreamCreate(flags uint32, priority int) (Stream, error)
	// StreamDestroy destroys a stream; work already queued still completes.
	StreamDestroy(s Stream) error
	// StreamSynchronize waits until all work on s has completed.
	StreamSynchronize(s Stream) error
	// StreamQuery returns nil when s is idle, cudaerr.NotReady while work is pending.
	StreamQuery(s Stream) error
	// StreamWaitEvent makes later work on s wait for e's most recent record (e may belong to
	// another device).
	//remote:posted
	StreamWaitEvent(s Stream, e Event) error

	// EventCreate creates an event (flags: Event*).
	EventCreate(flags uint32) (Event, error)
	// EventRecord records e at the current end of s.
	//remote:posted
	EventRecord(e Event, s Stream) error
	// EventQuery returns nil when e's record has completed, cudaerr.NotReady otherwise.
	EventQuery(e Event) error
	// EventSynchronize waits for e's record to complete.
	EventSynchronize(e Event) error
	// EventElapsed is the time in milliseconds between two completed records.
	EventElapsed(start, end Event) (float32, error)
	// EventDestroy destroys an event.
	EventDestroy(e Event) error

	// LaunchHostFunc runs fn once s reaches this point. fn runs on a thread the backend owns:
	// it must not call the backend and should return quickly.
	LaunchHostFunc(s Stream, fn func()) error

	// LoadModule loads a module into the device's context.
	LoadModule(spec ModuleSpec) (Module, error)
	// ModuleKernel looks up a kernel of a loaded module by its (extern "C") name.
	ModuleKernel(m Module, name string) (Kernel, error)
	// UnloadModule unloads a module; its kernels become invalid.
	UnloadModule(m Module) error
	// Launch enqueues k on s. The backend does not check args against the kernel's
	// parameters: the device layer does that before calling.
	//remote:posted
	Launch(k Kernel, grid, block Dim3, sharedMem uint32, s Stream, args []Arg) error
	// OccupancyMaxActiveBlocksPerSM is how many blocks of k, of blockSize threads and
	// dynamicShared bytes of dynamic shared memory each, one multiprocessor holds at once
	// (cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags; flags: Occupancy*); 0 when such
	// a block cannot launch.
	OccupancyMaxActiveBlocksPerSM(k Kernel, blockSize int, dynamicShared uint64, flags uint32) (int, error)
}
