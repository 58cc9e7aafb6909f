package cudart

import (
	"runtime"
	"sync"
	"unsafe"

	"github.com/gpuactor/gpuactor/internal/backend"
)

// Backend is the real CUDA runtime behind the backend.Backend interface.
type Backend struct {
	rt *Runtime

	// Modules and kernels by their raw handle, so a launch knows which API a kernel came from
	// and an unknown handle is an error instead of a crash inside the driver.
	mu      sync.RWMutex
	modules map[backend.Module]moduleEntry
	kernels map[backend.Kernel]Kernel
}

// Health is device ordinal's failure state, shared by every handle opened on it: kept by the
// Runtime, the process's one libcudart, whose contexts the GPU's handles share.
func (b *Backend) Health(ordinal int) *backend.Health { return b.rt.health.Of(ordinal) }

type moduleEntry struct {
	mod     Module
	kernels []backend.Kernel
}

var (
	_ backend.Backend = (*Backend)(nil)
	_ backend.Device  = (*device)(nil)
)

// NewBackend adapts a loaded runtime.
func NewBackend(rt *Runtime) *Backend {
	return &Backend{rt: rt, modules: map[backend.Module]moduleEntry{}, kernels: map[backend.Kernel]Kernel{}}
}

// Runtime is the runtime behind the backend.
func (b *Backend) Runtime() *Runtime { return b.rt }

// Name is "cuda".
func (b *Backend) Name() string { return "cuda" }

// RuntimeVersion is the runtime's version, e.g. 13000.
func (b *Backend) RuntimeVersion() (int, error) { return b.rt.RuntimeVersion() }

// DriverVersion is the driver's version, 0 when no driver is installed.
func (b *Backend) DriverVersion() (int, error) { return b.rt.DriverVersion() }

// DeviceCount is the number of devices.
func (b *Backend) DeviceCount() (int, error) { return b.rt.GetDeviceCount() }

// Open makes ordinal current on the calling OS thread and initializes its primary context
// (cudaSetDevice, then cudaInitDevice on 12+ or cudaFree(0) before). The returned Device must
// only be used from this thread.
func (b *Backend) Open(ordinal int) (backend.Device, error) {
	if err := b.rt.SetDevice(ordinal); err != nil {
		return nil, err
	}
	if err := b.rt.InitDevice(ordinal); err != nil {
		return nil, err
	}
	return &device{b: b, rt: b.rt, ordinal: ordinal, eventQuery: b.rt.anyThreadEventQuery()}, nil
}

// device is one device's API, used from its actor's thread only.
type device struct {
	b       *Backend
	rt      *Runtime
	ordinal int
	args    KernelArgs // launch scratch, reused: the runtime copies parameters at launch
	frame   callFrame  // argument words of the hot calls: no allocation per call
	graphs  graphRefs  // graph host functions held by graphs and captures (backend_graph.go)
	splits  collSplits // NCCL communicator splits by their slots (collective_split.go)
	// eventQuery is cuEventQuery, resolved on the actor's thread at open, for waiters' queries
	// from any thread (anythread.go); 0 when the driver's entry point is not there.
	eventQuery uintptr
}

func (d *device) Ordinal() int                       { return d.ordinal }
func (d *device) Name() (string, error)              { return d.rt.DeviceName(d.ordinal) }
func (d *device) PCIBusID() (string, error)          { return d.rt.DeviceGetPCIBusID(d.ordinal) }
func (d *device) MemInfo() (uint64, uint64, error)   { return d.rt.MemGetInfo() }
func (d *device) Synchronize() error                 { return d.rt.DeviceSynchronize() }
func (d *device) LastError() error                   { return d.rt.GetLastError() }
func (d *device) Malloc(n uint64) (DevicePtr, error) { return d.rt.Malloc(n) }
func (d *device) Free(p DevicePtr) error             { return d.rt.Free(p) }

func (d *device) Attribute(attr backend.Attr) (int, error) {
	return d.rt.DeviceGetAttribute(attr, d.ordinal)
}

func (d *device) StreamPriorityRange() (int, int, error) {
	return d.rt.DeviceGetStreamPriorityRange()
}

func (d *device) HostAlloc(size uint64, flags uint32) (unsafe.Pointer, error) {
	return d.rt.HostAlloc(size, flags)
}

func (d *device) HostFree(p unsafe.Pointer) error { return d.rt.FreeHost(p) }

func (d *device) HostRegister(p unsafe.Pointer, size uint64, flags uint32) error {
	return d.rt.HostRegister(p, size, flags)
}

func (d *device) HostUnregister(p unsafe.Pointer) error { return d.rt.HostUnregister(p) }

func (d *device) CopyHtoD(dst DevicePtr, src unsafe.Pointer, n uint64, s Stream) error {
	return d.rt.memcpyAsync(&d.frame, uintptr(dst), uintptr(src), n, MemcpyHostToDevice, s)
}

func (d *device) CopyDtoH(dst unsafe.Pointer, src DevicePtr, n uint64, s Stream) error {
	return d.rt.memcpyAsync(&d.frame, uintptr(dst), uintptr(src), n, MemcpyDeviceToHost, s)
}

func (d *device) CopyDtoD(dst, src DevicePtr, n uint64, s Stream) error {
	return d.rt.memcpyAsync(&d.frame, uintptr(dst), uintptr(src), n, MemcpyDeviceToDevice, s)
}

func (d *device) Memset(p DevicePtr, value byte, n uint64, s Stream) error {
	return d.rt.memsetAsync(&d.frame, p, value, n, s)
}

func (d *device) StreamCreate(flags uint32, priority int) (Stream, error) {
	return d.rt.StreamCreateWithPriority(flags, priority)
}

func (d *device) StreamDestroy(s Stream) error     { return d.rt.StreamDestroy(s) }
func (d *device) StreamSynchronize(s Stream) error { return d.rt.streamSynchronize(&d.frame, s) }
func (d *device) StreamQuery(s Stream) error       { return d.rt.streamQuery(&d.frame, s) }
func (d *device) StreamWaitEvent(s Stream, e Event) error {
	return d.rt.streamWaitEvent(&d.frame, s, e)
}
func (d *device) EventCreate(flags uint32) (Event, error) { return d.rt.EventCreateWithFlags(flags) }
func (d *device) EventRecord(e Event, s Stream) error     { return d.rt.eventRecord(&d.frame, e, s) }
func (d *device) EventQuery(e Event) error                { return d.rt.eventQuery(&d.frame, e) }
func (d *device) EventSynchronize(e Event) error          { return d.rt.eventSynchronize(&d.frame, e) }
func (d *device) EventDestroy(e Event) error              { return d.rt.EventDestroy(e) }

func (d *device) EventElapsed(start, end Event) (float32, error) {
	return d.rt.EventElapsedTime(start, end)
}

// LaunchHostFunc runs fn on CUDA's callback thread once s reaches this point; fn must not call
// the backend.
func (d *device) LaunchHostFunc(s Stream, fn func()) error {
	if d.graphs.open > 0 { // maybe captured into a graph (backend_graph.go)
		return d.launchHostFunc(s, fn)
	}
	return d.rt.LaunchHostFunc(s, fn)
}

func (d *device) LoadModule(spec backend.ModuleSpec) (backend.Module, error) {
	m, err := d.rt.LoadModule(spec.Image, spec.ImageKind)
	if err != nil {
		return 0, err
	}
	h := backend.Module(m.Handle)
	d.b.mu.Lock()
	d.b.modules[h] = moduleEntry{mod: m}
	d.b.mu.Unlock()
	return h, nil
}

func (d *device) ModuleKernel(m backend.Module, name string) (backend.Kernel, error) {
	d.b.mu.RLock()
	e, ok := d.b.modules[m]
	d.b.mu.RUnlock()
	if !ok {
		return 0, d.rt.newError("ModuleKernel", codeInvalidResourceHandle)
	}
	k, err := d.rt.ModuleKernel(e.mod, name)
	if err != nil {
		return 0, err
	}
	h := backend.Kernel(k.Handle)
	d.b.mu.Lock()
	if e, ok := d.b.modules[m]; ok {
		e.kernels = append(e.kernels, h)
		d.b.modules[m] = e
		d.b.kernels[h] = k
	}
	d.b.mu.Unlock()
	return h, nil
}

func (d *device) UnloadModule(m backend.Module) error {
	d.b.mu.Lock()
	e, ok := d.b.modules[m]
	if ok {
		delete(d.b.modules, m)
		for _, k := range e.kernels {
			delete(d.b.kernels, k)
		}
	}
	d.b.mu.Unlock()
	if !ok {
		return d.rt.newError("UnloadModule", codeInvalidResourceHandle)
	}
	return d.rt.UnloadModule(e.mod)
}

// Launch packs args into the device's reusable parameter storage and launches k.
func (d *device) Launch(k backend.Kernel, grid, block backend.Dim3, sharedMem uint32, s Stream, args []backend.Arg) error {
	kern, err := d.kernel("cudaLaunchKernel", k)
	if err != nil {
		return err
	}
	d.args.Reset()
	for _, a := range args {
		d.args.Add(argBits(a))
	}
	argv := d.args.Pointers()
	err = d.rt.launch(&d.frame, kern, grid, block, sharedMem, s, uintptr(unsafe.Pointer(unsafe.SliceData(argv))))
	runtime.KeepAlive(argv)
	return err
}

// argBits is the argument's value masked to its size (the kernel reads Size() bytes of it).
func argBits(a backend.Arg) uint64 {
	if a.Kind.Size() == 4 {
		return a.Bits & 0xFFFFFFFF
	}
	return a.Bits
}
