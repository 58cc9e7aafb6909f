// Package sim is a pure-Go simulator of the CUDA runtime behind backend.Backend.
//
// It is not a mock: it keeps the runtime's ordering semantics and answers the same cudaerr
// codes the real runtime gives for the same mistakes, so that the device layer, the domain
// packages and the services built on gpuactor can run their test suites (race detector
// included) on machines without a GPU.
//
// What is simulated:
//
//   - Devices with H100-like attributes (compute capability 9.0) and a memory capacity
//     (WithMemory, 16 GiB by default). Capacity is bookkeeping: host RAM is only used for what
//     is allocated. Device memory lives at fake addresses, disjoint between devices, 256-byte
//     aligned, with an unmapped guard gap after every allocation; its backing bytes are Go
//     memory aligned to 64 bytes, so kernels may view them as []float64, []complex128 and so on.
//   - Streams: each executes its work in order, on a goroutine of its own that exists only
//     while the stream has work queued (no goroutine outlives its work). Work on different
//     streams runs concurrently. Stream 0 is the device's legacy default stream, with its
//     implicit synchronization against blocking (StreamDefault) streams.
//   - Events, StreamWaitEvent (across devices too), host functions, kernels (Go functions taken
//     from ModuleSpec.SimKernels), copies and memsets.
//   - Peer access: every pair of devices is linked. A kernel may touch another device's memory
//     only while its device has peer access to that device enabled (else the access faults,
//     as on a GPU); copies between devices (CopyDtoD, MemcpyPeerAsync) need no access.
//   - Faults: a kernel that panics or returns an error is a device fault. As on a GPU the fault
//     is sticky: the device answers cudaerr.IllegalAddress (out-of-bounds access) or
//     cudaerr.LaunchFailure (anything else) to every later call, and queued work is dropped.
//     A sticky fault fails every device of the machine with its code, as the runtime fails
//     every GPU of the process; WithConfinedFaults keeps it to its device. A lost device
//     (Lose, FaultPlan.LostAt) is always the device's alone.
//
// Runtime behaviours that are mirrored on purpose (they differ from "an async queue"):
//
//   - CopyHtoD from pageable memory (anything not from HostAlloc or HostRegister) snapshots
//     the source when called, so the caller may reuse it at once; from pinned memory it reads
//     the source when the stream reaches the copy, so a caller that overwrites a pinned
//     buffer too early gets the new bytes (and, under -race, a race report), as on a GPU.
//   - CopyDtoH into pageable memory returns only once the copy is done; into pinned memory it
//     returns at once and the caller synchronizes before reading.
//   - Free waits for all work on the device first (cudaFree synchronizes).
//   - Host functions queued after a fault are not called (cudaLaunchHostFunc's contract).
//
// Handles (streams, events, modules, kernels) come from one counter per Backend, are never 0
// and never reused.
//
// Limits: the simulator runs a kernel once per launch, on the stream's goroutine; a kernel that
// starts goroutines of its own must recover panics in them (Go cannot recover another
// goroutine's panic: it would end the process). Allocating more device memory than the host
// has RAM fails the way any Go allocation does. Addresses assume a 64-bit platform.
package sim

import (
	"fmt"
	"math/bits"
	"sync"
	"sync/atomic"

	"go.uber.org/zap"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// Version the simulator reports for both the runtime and the driver (CUDA 13.0).
const Version = 13000

// DefaultDevices is the number of devices New simulates without WithDevices: two, so that
// cross-device mistakes are testable.
const DefaultDevices = 2

// DefaultMemory is a device's memory capacity without WithMemory: 16 GiB.
const DefaultMemory uint64 = 16 << 30

// DefaultDeviceName is the name every simulated device reports without WithName.
const DefaultDeviceName = "gpuactor simulator"

// Option configures New.
type Option func(*config)

type config struct {
	devices  int
	memory   uint64
	name     string
	log      *zap.Logger
	slowdown map[int]float64
	faults   map[int]FaultPlan
	confine  bool
}

// WithDevices sets how many devices the simulator has (default 2). n <= 0 simulates a machine
// without devices: DeviceCount then fails with cudaerr.NoDevice.
func WithDevices(n int) Option { return func(c *config) { c.devices = n } }

// WithMemory sets each device's memory capacity in bytes (default 16 GiB; at most 256 GiB).
// Backing RAM is only taken by Malloc, for the bytes allocated.
func WithMemory(bytes uint64) Option { return func(c *config) { c.memory = bytes } }

// WithSlowdown makes device ordinal run every stream operation factor times as long as it
// takes the simulator (it waits out the difference after each), so that a machine of devices
// of unequal speed can be simulated. factor <= 1 leaves the device at full speed.
func WithSlowdown(ordinal int, factor float64) Option {
	return func(c *config) {
		if c.slowdown == nil {
			c.slowdown = map[int]float64{}
		}
		c.slowdown[ordinal] = factor
	}
}

// WithConfinedFaults keeps a sticky fault to the device it happened on. Without it, a sticky
// fault fails every device of the machine, as the CUDA runtime answers a sticky fault's code
// for every GPU of the process. With it, the machine behaves as devices that each run in a
// worker process of their own (isolated devices) do on GPUs.
func WithConfinedFaults() Option { return func(c *config) { c.confine = true } }

// WithName sets the name the devices report (default "gpuactor simulator").
func WithName(name string) Option { return func(c *config) { c.name = name } }

// WithLogger sets where the simulator reports device faults and recovered host-function
// panics (default: nowhere).
func WithLogger(l *zap.Logger) Option { return func(c *config) { c.log = l } }

// Backend is a simulated machine. It implements backend.Backend; its methods are safe for
// concurrent use.
type Backend struct {
	name     string
	capacity uint64
	log      *zap.Logger
	devices  []*device
	confine  bool // a sticky fault stays on its device (WithConfinedFaults)

	handles atomic.Uint64 // last handle handed out
	health  backend.HealthBook

	mu      sync.RWMutex // guards the handle registries
	streams map[backend.Stream]*stream
	events  map[backend.Event]*event
	modules map[backend.Module]*module
	kernels map[backend.Kernel]*kernel

	host hostMemory
}

var _ backend.Backend = (*Backend)(nil)

// New makes a simulated machine.
func New(opts ...Option) *Backend {
	c := config{devices: DefaultDevices, memory: DefaultMemory, name: DefaultDeviceName}
	for _, o := range opts {
		o(&c)
	}
	if c.log == nil {
		c.log = zap.NewNop()
	}
	if c.devices < 0 {
		c.devices = 0
	}
	if c.devices > maxDevices {
		c.devices = maxDevices
	}
	if c.memory > maxCapacity {
		c.memory = maxCapacity
	}
	b := &Backend{
		name:     c.name,
		capacity: c.memory,
		log:      c.log,
		confine:  c.confine,
		streams:  map[backend.Stream]*stream{},
		events:   map[backend.Event]*event{},
		modules:  map[backend.Module]*module{},
		kernels:  map[backend.Kernel]*kernel{},
		host:     hostMemory{limit: pinnedLimit()},
	}
	b.handles.Store(handleBase)
	for i := range c.devices {
		d := newDevice(b, i)
		d.slowdown = c.slowdown[i]
		if plan, ok := c.faults[i]; ok {
			d.inject = newInjector(plan, i)
		}
		b.devices = append(b.devices, d)
	}
	return b
}

// Name is "sim".
func (b *Backend) Name() string { return "sim" }

// RuntimeVersion is 13000 (CUDA 13.0).
func (b *Backend) RuntimeVersion() (int, error) { return Version, nil }

// DriverVersion is 13000 (CUDA 13.0).
func (b *Backend) DriverVersion() (int, error) { return Version, nil }

// DeviceCount is the number of simulated devices; with none it fails with cudaerr.NoDevice,
// as cudaGetDeviceCount does.
func (b *Backend) DeviceCount() (int, error) {
	if len(b.devices) == 0 {
		return 0, newError("cudaGetDeviceCount", cudaerr.NoDevice, "the simulator was configured with no devices")
	}
	return len(b.devices), nil
}

// Health is device ordinal's failure state, shared by every handle opened on it.
func (b *Backend) Health(ordinal int) *backend.Health { return b.health.Of(ordinal) }

// Open returns device ordinal. Opening a device twice returns the same device, as the primary
// context is shared.
func (b *Backend) Open(ordinal int) (backend.Device, error) {
	if ordinal < 0 || ordinal >= len(b.devices) {
		return nil, newError("cudaSetDevice", cudaerr.InvalidDevice,
			fmt.Sprintf("device ordinal %d out of range: the simulator has %d device(s)", ordinal, len(b.devices)))
	}
	_ = b.devices[ordinal].activate(backend.DeviceScheduleAuto, false) // never refuses: no flags asked
	return b.devices[ordinal], nil
}

// handleBase is where handles start: small non-zero values that do not look like addresses.
const handleBase = 0x1000

// nextHandle returns a fresh handle value, unique within the Backend and never 0.
func (b *Backend) nextHandle() uintptr { return uintptr(b.handles.Add(1)) }

// Device address layout: device d's memory lies in [addrBase + d<<addrShift, +1<<addrShift).
// addrBase is 2^48, above every address mmap hands out unasked on x86-64 and arm64, so no host
// pointer, not even one to memory shared with another process, falls in a device's range.
const (
	addrBase     uint64 = 1 << 48
	addrShift           = 40
	maxDevices          = 64
	maxCapacity  uint64 = 1 << (addrShift - 2) // a quarter of a device's address range
	firstOffset  uint64 = 1 << 21              // first allocation of a device: range start + 2 MiB
	allocAlign   uint64 = 256                  // cudaMalloc's alignment guarantee
	textureAlign uint64 = 512                  // where allocations start (cudaDevAttrTextureAlignment)
	guardGap     uint64 = 64 << 10             // unmapped bytes after every allocation
)

// ownerOf returns the device whose address range holds p, or nil.
func (b *Backend) ownerOf(p uint64) *device {
	if p < addrBase {
		return nil
	}
	i := (p - addrBase) >> addrShift
	if i >= uint64(len(b.devices)) {
		return nil
	}
	return b.devices[i]
}

// runtimeMessages are cudaGetErrorString's texts for the codes the simulator returns.
var runtimeMessages = map[cudaerr.Code]string{
	cudaerr.InvalidValue:                "invalid argument",
	cudaerr.MemoryAllocation:            "out of memory",
	cudaerr.InvalidConfiguration:        "invalid configuration argument",
	cudaerr.NoDevice:                    "no CUDA-capable device is detected",
	cudaerr.InvalidDevice:               "invalid device ordinal",
	cudaerr.InvalidResourceHandle:       "invalid resource handle",
	cudaerr.SymbolNotFound:              "named symbol not found",
	cudaerr.NotReady:                    "device not ready",
	cudaerr.IllegalAddress:              "an illegal memory access was encountered",
	cudaerr.LaunchFailure:               "unspecified launch failure",
	cudaerr.HostMemoryAlreadyRegistered: "part or all of the requested memory range is already mapped",
	cudaerr.HostMemoryNotRegistered:     "pointer does not correspond to a registered memory region",
}

// newError builds the error a runtime call returns: the call, the code, the runtime's message
// and the simulator's explanation.
func newError(op string, code cudaerr.Code, detail string) *cudaerr.Error {
	msg, ok := runtimeMessages[code]
	if !ok {
		msg = code.Message()
	}
	if detail != "" {
		msg += " (sim: " + detail + ")"
	}
	return &cudaerr.Error{Op: op, Code: code, Message: msg}
}

// roundUp rounds n up to a multiple of a (a power of two); ok is false on overflow.
func roundUp(n, a uint64) (uint64, bool) {
	r, carry := bits.Add64(n, a-1, 0)
	if carry != 0 {
		return 0, false
	}
	return r &^ (a - 1), true
}
