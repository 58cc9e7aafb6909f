package device

import (
	"fmt"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// ComputeCapability is a device's SM version, e.g. 9.0 for an H100.
type ComputeCapability struct{ Major, Minor int }

// String is "9.0".
func (c ComputeCapability) String() string { return fmt.Sprintf("%d.%d", c.Major, c.Minor) }

// Arch is the NVRTC architecture number, e.g. 90.
func (c ComputeCapability) Arch() int { return c.Major*10 + c.Minor }

// Properties are a device's fixed properties, read through cudaDeviceGetAttribute (stable
// across runtime versions, unlike the cudaDeviceProp struct).
type Properties struct {
	Ordinal                   int
	Name                      string
	Backend                   string // as Device.Backend names it: cuda or sim, isolated or not
	RuntimeVersion            int    // e.g. 13000
	DriverVersion             int
	ComputeCapability         ComputeCapability
	PCIBusID                  string
	TotalMemory               uint64 // bytes
	MultiProcessors           int
	ClockKHz                  int
	MemoryClockKHz            int
	MemoryBusWidth            int // bits
	L2CacheBytes              int
	WarpSize                  int
	MaxThreadsPerBlock        int
	MaxThreadsPerSM           int
	MaxBlock                  cuda.Dim3
	MaxGrid                   cuda.Dim3
	SharedMemPerBlock         int // bytes, without opting in
	SharedMemPerBlockOptin    int // bytes, the most a kernel can opt in to
	RegistersPerBlock         int
	ConstantMemory            int
	AsyncEngines              int
	ConcurrentKernels         bool
	UnifiedAddressing         bool
	ManagedMemory             bool
	CanMapHostMemory          bool
	ECCEnabled                bool
	Integrated                bool
	MemoryPoolsSupported      bool
	StreamPrioritiesSupported bool
	CooperativeLaunch         bool

	// The rest is what NVIDIA's deviceQuery sample prints besides.
	SharedMemPerSM      int    // bytes of shared memory one multiprocessor has
	MaxPitch            int    // bytes, the widest pitch a 2D copy accepts
	TextureAlignment    int    // bytes
	SurfaceAlignment    int    // bytes
	MaxTexture1D        int    // width
	MaxTexture2D        [2]int // width, height
	MaxTexture3D        [3]int // width, height, depth
	MaxTexture1DLayered [2]int // width, layers
	MaxTexture2DLayered [3]int // width, height, layers
	GPUOverlap          bool   // the device can copy memory while it runs a kernel
	KernelExecTimeout   bool   // a watchdog limits how long a kernel may run (a display GPU)
	ComputePreemption   bool   // kernels can be preempted at instruction level
	// ComputeMode is the cudaComputeMode nvidia-smi set: 0 default (any process), 1 exclusive
	// thread (no longer used), 2 prohibited (no process may use the device), 3 exclusive
	// process (one process at a time).
	ComputeMode int
	PCIDomain   int // the PCI domain, bus and device numbers of PCIBusID, as numbers
	PCIBus      int
	PCIDevice   int
}

// MemoryBandwidth is the theoretical peak in bytes per second (DDR: two transfers per clock).
func (p Properties) MemoryBandwidth() float64 {
	return 2 * float64(p.MemoryClockKHz) * 1e3 * float64(p.MemoryBusWidth) / 8
}

func readProperties(be backend.Backend, dev backend.Device) (Properties, error) {
	p := Properties{Ordinal: dev.Ordinal(), Backend: string(kindOf(be))}
	var err error
	if p.RuntimeVersion, err = be.RuntimeVersion(); err != nil {
		return p, err
	}
	p.DriverVersion, _ = be.DriverVersion()
	if p.Name, err = dev.Name(); err != nil {
		return p, err
	}
	if p.PCIBusID, err = dev.PCIBusID(); err != nil {
		return p, err
	}
	if _, p.TotalMemory, err = dev.MemInfo(); err != nil {
		return p, err
	}
	ints := []struct {
		attr backend.Attr
		dst  *int
	}{
		{backend.AttrComputeCapabilityMajor, &p.ComputeCapability.Major},
		{backend.AttrComputeCapabilityMinor, &p.ComputeCapability.Minor},
		{backend.AttrMultiProcessorCount, &p.MultiProcessors},
		{backend.AttrClockRate, &p.ClockKHz},
		{backend.AttrMemoryClockRate, &p.MemoryClockKHz},
		{backend.AttrGlobalMemoryBusWidth, &p.MemoryBusWidth},
		{backend.AttrL2CacheSize, &p.L2CacheBytes},
		{backend.AttrWarpSize, &p.WarpSize},
		{backend.AttrMaxThreadsPerBlock, &p.MaxThreadsPerBlock},
		{backend.AttrMaxThreadsPerMultiProcessor, &p.MaxThreadsPerSM},
		{backend.AttrMaxSharedMemoryPerBlock, &p.SharedMemPerBlock},
		{backend.AttrMaxSharedMemoryPerBlockOptin, &p.SharedMemPerBlockOptin},
		{backend.AttrMaxRegistersPerBlock, &p.RegistersPerBlock},
		{backend.AttrTotalConstantMemory, &p.ConstantMemory},
		{backend.AttrAsyncEngineCount, &p.AsyncEngines},
		{backend.AttrMaxSharedMemoryPerSM, &p.SharedMemPerSM},
		{backend.AttrMaxPitch, &p.MaxPitch},
		{backend.AttrTextureAlignment, &p.TextureAlignment},
		{backend.AttrSurfaceAlignment, &p.SurfaceAlignment},
		{backend.AttrMaxTexture1DWidth, &p.MaxTexture1D},
		{backend.AttrMaxTexture2DWidth, &p.MaxTexture2D[0]},
		{backend.AttrMaxTexture2DHeight, &p.MaxTexture2D[1]},
		{backend.AttrMaxTexture3DWidth, &p.MaxTexture3D[0]},
		{backend.AttrMaxTexture3DHeight, &p.MaxTexture3D[1]},
		{backend.AttrMaxTexture3DDepth, &p.MaxTexture3D[2]},
		{backend.AttrMaxTexture1DLayeredWidth, &p.MaxTexture1DLayered[0]},
		{backend.AttrMaxTexture1DLayeredLayers, &p.MaxTexture1DLayered[1]},
		{backend.AttrMaxTexture2DLayeredWidth, &p.MaxTexture2DLayered[0]},
		{backend.AttrMaxTexture2DLayeredHeight, &p.MaxTexture2DLayered[1]},
		{backend.AttrMaxTexture2DLayeredLayers, &p.MaxTexture2DLayered[2]},
		{backend.AttrComputeMode, &p.ComputeMode},
		{backend.AttrPCIDomainID, &p.PCIDomain},
		{backend.AttrPCIBusID, &p.PCIBus},
		{backend.AttrPCIDeviceID, &p.PCIDevice},
	}
	for _, a := range ints {
		if *a.dst, err = dev.Attribute(a.attr); err != nil {
			return p, fmt.Errorf("gpuactor: reading device attribute %d: %w", a.attr, err)
		}
	}
	dims := []struct {
		attr backend.Attr
		dst  *uint32
	}{
		{backend.AttrMaxBlockDimX, &p.MaxBlock.X}, {backend.AttrMaxBlockDimY, &p.MaxBlock.Y},
		{backend.AttrMaxBlockDimZ, &p.MaxBlock.Z}, {backend.AttrMaxGridDimX, &p.MaxGrid.X},
		{backend.AttrMaxGridDimY, &p.MaxGrid.Y}, {backend.AttrMaxGridDimZ, &p.MaxGrid.Z},
	}
	for _, a := range dims {
		v, err := dev.Attribute(a.attr)
		if err != nil {
			return p, fmt.Errorf("gpuactor: reading device attribute %d: %w", a.attr, err)
		}
		*a.dst = uint32(v)
	}
	flags := []struct {
		attr backend.Attr
		dst  *bool
	}{
		{backend.AttrConcurrentKernels, &p.ConcurrentKernels},
		{backend.AttrUnifiedAddressing, &p.UnifiedAddressing},
		{backend.AttrManagedMemory, &p.ManagedMemory},
		{backend.AttrCanMapHostMemory, &p.CanMapHostMemory},
		{backend.AttrECCEnabled, &p.ECCEnabled},
		{backend.AttrIntegrated, &p.Integrated},
		{backend.AttrMemoryPoolsSupported, &p.MemoryPoolsSupported},
		{backend.AttrStreamPrioritiesSupported, &p.StreamPrioritiesSupported},
		{backend.AttrCooperativeLaunch, &p.CooperativeLaunch},
		{backend.AttrGPUOverlap, &p.GPUOverlap},
		{backend.AttrKernelExecTimeout, &p.KernelExecTimeout},
		{backend.AttrComputePreemptionSupported, &p.ComputePreemption},
	}
	for _, a := range flags {
		v, err := dev.Attribute(a.attr)
		if err != nil {
			return p, fmt.Errorf("gpuactor: reading device attribute %d: %w", a.attr, err)
		}
		*a.dst = v != 0
	}
	return p, nil
}
