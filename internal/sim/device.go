package sim

import (
	"fmt"
	"sync"
	"sync/atomic"

	"go.uber.org/zap"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// device is one simulated GPU: its memory, its legacy default stream, its fault state.
type device struct {
	b       *Backend
	ordinal int
	attrs   map[backend.Attr]int
	busID   string
	log     *zap.Logger

	mem   deviceMemory
	alloc *allocState // stream-ordered allocator, pools, managed memory (alloc.go)

	fault  atomic.Pointer[fault] // the sticky error, once the device has faulted
	inject *injector             // WithFaults' plan; nil without one

	slowdown float64 // WithSlowdown's factor; <= 1: full speed

	errMu   sync.Mutex
	lastErr error // cudaGetLastError's state

	null *stream // the legacy default stream (handle 0)

	strMu    sync.Mutex
	blocking map[*stream]struct{} // StreamDefault streams, which sync with the null stream

	pendMu   sync.Mutex
	pendCond sync.Cond
	pending  int // ops queued on any stream of the device and not yet finished

	graphs graphState // graphs, executable graphs and stream captures (graph.go)
	peers  peerState  // the devices whose memory this one may access (peer.go)
	mgmt   mgmtState  // limits, cache preferences, context flags (devmgmt.go)
	arrays arrayState // CUDA arrays and mipmapped arrays (arraystore.go)
	tex    texState   // texture and surface objects (texture.go)
	coll   collState  // communicator ranks (collective.go)

	l2Resets  atomic.Int64 // ResetPersistingL2Cache calls (streamattr.go)
	profiling atomic.Bool  // between ProfilerStart and ProfilerStop
}

var _ backend.Device = (*device)(nil)

// Priority range of the simulated devices (as on an H100: 0 is the least, -5 the greatest).
const (
	leastPriority    = 0
	greatestPriority = -5
)

func newDevice(b *Backend, ordinal int) *device {
	d := &device{
		b:        b,
		ordinal:  ordinal,
		busID:    fmt.Sprintf("0000:%02x:00.0", ordinal+1),
		log:      b.log.With(zap.Int("device", ordinal)),
		blocking: map[*stream]struct{}{},
	}
	d.pendCond.L = &d.pendMu
	d.mem.init(ordinal, b.capacity)
	d.alloc = newAllocState(d)
	d.null = newStream(d, 0, backend.StreamDefault, leastPriority)
	d.attrs = map[backend.Attr]int{
		backend.AttrMaxThreadsPerBlock:           1024,
		backend.AttrMaxBlockDimX:                 1024,
		backend.AttrMaxBlockDimY:                 1024,
		backend.AttrMaxBlockDimZ:                 64,
		backend.AttrMaxGridDimX:                  1<<31 - 1,
		backend.AttrMaxGridDimY:                  65535,
		backend.AttrMaxGridDimZ:                  65535,
		backend.AttrMaxSharedMemoryPerBlock:      48 << 10,
		backend.AttrTotalConstantMemory:          64 << 10,
		backend.AttrWarpSize:                     32,
		backend.AttrMaxRegistersPerBlock:         64 << 10,
		backend.AttrClockRate:                    1_980_000, // kHz
		backend.AttrMultiProcessorCount:          8,
		backend.AttrKernelExecTimeout:            0,
		backend.AttrIntegrated:                   0,
		backend.AttrCanMapHostMemory:             1,
		backend.AttrComputeMode:                  0, // cudaComputeModeDefault
		backend.AttrConcurrentKernels:            1,
		backend.AttrECCEnabled:                   1,
		backend.AttrPCIBusID:                     ordinal + 1,
		backend.AttrPCIDeviceID:                  0,
		backend.AttrTCCDriver:                    0,
		backend.AttrMemoryClockRate:              2_619_000, // kHz
		backend.AttrGlobalMemoryBusWidth:         5120,
		backend.AttrL2CacheSize:                  50 << 20,
		backend.AttrMaxThreadsPerMultiProcessor:  2048,
		backend.AttrAsyncEngineCount:             3,
		backend.AttrUnifiedAddressing:            1,
		backend.AttrPCIDomainID:                  0,
		backend.AttrComputeCapabilityMajor:       9,
		backend.AttrComputeCapabilityMinor:       0,
		backend.AttrStreamPrioritiesSupported:    1,
		backend.AttrManagedMemory:                1,
		backend.AttrIsMultiGpuBoard:              0,
		backend.AttrConcurrentManagedAccess:      1,
		backend.AttrCooperativeLaunch:            1,
		backend.AttrMaxSharedMemoryPerBlockOptin: 227 << 10,
		backend.AttrMaxBlocksPerMultiprocessor:   32,
		backend.AttrReservedSharedMemoryPerBlock: 1 << 10,
		backend.AttrMemoryPoolsSupported:         1,
		// What deviceQuery prints besides, with an H100's values.
		backend.AttrMaxPitch:                   1<<31 - 1,
		backend.AttrTextureAlignment:           512,
		backend.AttrGPUOverlap:                 1,
		backend.AttrMaxTexture1DWidth:          131072,
		backend.AttrMaxTexture2DWidth:          131072,
		backend.AttrMaxTexture2DHeight:         65536,
		backend.AttrMaxTexture3DWidth:          16384,
		backend.AttrMaxTexture3DHeight:         16384,
		backend.AttrMaxTexture3DDepth:          16384,
		backend.AttrMaxTexture1DLayeredWidth:   32768,
		backend.AttrMaxTexture1DLayeredLayers:  2048,
		backend.AttrMaxTexture2DLayeredWidth:   32768,
		backend.AttrMaxTexture2DLayeredHeight:  32768,
		backend.AttrMaxTexture2DLayeredLayers:  2048,
		backend.AttrSurfaceAlignment:           512,
		backend.AttrMaxSharedMemoryPerSM:       228 << 10,
		backend.AttrComputePreemptionSupported: 1,
	}
	for a, v := range moreAttrs(ordinal, d.attrs[backend.AttrL2CacheSize]) {
		d.attrs[a] = v
	}
	d.mgmt.init()
	addStreamControlAttrs(d.attrs)
	return d
}

// fault is a device's sticky error: what went wrong, where.
type fault struct {
	code  cudaerr.Code
	cause string
}

// err is the error a call named op returns on a faulted device.
func (f *fault) err(op string) error {
	return newError(op, f.code, f.cause+"; the device stays unusable for the rest of the process")
}

// setFault makes the device fail with code from now on. The first fault wins. A sticky fault
// fails every other device of the machine too, with the same code, as the runtime does for
// every GPU of the process (docs/faults.md), unless the machine confines faults; a
// lost device (cudaErrorDevicesUnavailable) is the device's alone.
func (d *device) setFault(code cudaerr.Code, cause string, fields ...zap.Field) {
	if !d.markFault(code, cause, fields...) || !code.Sticky() || d.b.confine {
		return
	}
	for _, o := range d.b.devices {
		if o != d {
			o.markFault(code, fmt.Sprintf("device %d faulted (%s), and a sticky fault is the whole process's", d.ordinal, cause))
		}
	}
}

// markFault records the device's fault, if it has none yet; it reports whether it did.
func (d *device) markFault(code cudaerr.Code, cause string, fields ...zap.Field) bool {
	if !d.fault.CompareAndSwap(nil, &fault{code: code, cause: cause}) {
		return false
	}
	d.log.Error("sim device fault: the device is now unusable",
		append([]zap.Field{zap.String("code", code.Name()), zap.String("cause", cause)}, fields...)...)
	return true
}

// alive returns the sticky error, if the device has faulted.
func (d *device) alive(op string) error {
	if f := d.fault.Load(); f != nil {
		return f.err(op)
	}
	return nil
}

// fail builds a (non-sticky) error for call op and records it as the last error.
func (d *device) fail(op string, code cudaerr.Code, format string, args ...any) error {
	err := newError(op, code, fmt.Sprintf(format, args...))
	d.errMu.Lock()
	d.lastErr = err
	d.errMu.Unlock()
	return err
}

// Ordinal is the device's index.
func (d *device) Ordinal() int { return d.ordinal }

// Name is the configured device name.
func (d *device) Name() (string, error) { return d.b.name, nil }

// Attribute reads one attribute; an attribute the simulator does not know is
// cudaerr.InvalidValue.
func (d *device) Attribute(attr backend.Attr) (int, error) {
	v, ok := d.attrs[attr]
	if !ok {
		return 0, d.fail("cudaDeviceGetAttribute", cudaerr.InvalidValue, "device attribute %d is not simulated", int32(attr))
	}
	return v, nil
}

// PCIBusID is "0000:0N:00.0" with N the ordinal plus one.
func (d *device) PCIBusID() (string, error) { return d.busID, nil }

// MemInfo is (capacity − bytes in use, capacity).
func (d *device) MemInfo() (free, total uint64, err error) {
	if err := d.alive("cudaMemGetInfo"); err != nil {
		return 0, 0, err
	}
	used := d.mem.inUse()
	return d.mem.capacity - used, d.mem.capacity, nil
}

// Synchronize waits until every stream of the device is idle.
func (d *device) Synchronize() error {
	d.waitIdle()
	d.alloc.releaseAtSync(nil, 0)
	return d.alive("cudaDeviceSynchronize")
}

// StreamPriorityRange is (0, -5).
func (d *device) StreamPriorityRange() (least, greatest int, err error) {
	return leastPriority, greatestPriority, nil
}

// LastError returns and clears the last error a call on this device returned. On a faulted
// device it returns the sticky error, which it cannot clear.
func (d *device) LastError() error {
	if err := d.alive("cudaGetLastError"); err != nil {
		return err
	}
	d.errMu.Lock()
	defer d.errMu.Unlock()
	err := d.lastErr
	d.lastErr = nil
	return err
}

// pendAdd counts an op queued on one of the device's streams.
func (d *device) pendAdd() {
	d.pendMu.Lock()
	d.pending++
	d.pendMu.Unlock()
}

// pendDone counts an op finished.
func (d *device) pendDone() {
	d.pendMu.Lock()
	d.pending--
	if d.pending == 0 {
		d.pendCond.Broadcast()
	}
	d.pendMu.Unlock()
}

// waitIdle blocks until no op is queued on the device.
func (d *device) waitIdle() {
	d.pendMu.Lock()
	for d.pending > 0 {
		d.pendCond.Wait()
	}
	d.pendMu.Unlock()
}
