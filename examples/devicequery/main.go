// Command devicequery is NVIDIA's deviceQuery sample done the gpuactor way: it prints every
// device's properties, line for line as the C sample prints them, then, on a machine of two
// or more GPUs, whether each can access each other's memory directly, and "Result = PASS".
//
//	go run ./examples/devicequery            # the real GPUs, or the simulator without one
//	go run ./examples/devicequery -backend sim
//
// The properties come from device.Properties, which reads them with cudaDeviceGetAttribute
// when a device opens (the C sample reads most of them from cudaGetDeviceProperties: the same
// values); the ones the C sample itself reads with cudaDeviceGetAttribute (the clock rates,
// copy overlap, the kernel time limit, the compute mode) come from Device.Attribute, as do
// the lines it prints only when built for an older runtime (multi-device cooperative launch,
// before 13.0) or on Windows (the driver model). The peer matrix comes from
// interop.CanAccessPeer. Only the program's name on the first line differs from the C
// sample's output on the same machine.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/examples/internal/sample"
	"github.com/gpuactor/gpuactor/interop"
	"github.com/gpuactor/gpuactor/sim"
)

type config struct {
	sample.Flags
	sim *sim.Simulator // the simulated machine to use instead of the default one (tests)
}

func main() {
	var c config
	c.RegisterBackend()
	flag.Parse()
	if err := run(context.Background(), os.Stdout, os.Args[0], c); err != nil {
		fmt.Println(err)
		fmt.Println("Result = FAIL")
		os.Exit(1)
	}
}

// run prints the report to w; prog is the program's name for the first line.
func run(ctx context.Context, w io.Writer, prog string, c config) (err error) {
	fmt.Fprintf(w, "%s Starting...\n\n", prog)
	fmt.Fprintf(w, " CUDA Device Query (Runtime API) version (CUDART static linking)\n\n")
	opts := c.OptionsOn(c.sim)
	devs, err := device.OpenAll(ctx, opts...)
	if err != nil {
		return err
	}
	defer sample.CloseAll(&err, devs)
	if len(devs) == 0 {
		fmt.Fprintln(w, "There are no available device(s) that support CUDA")
	} else {
		fmt.Fprintf(w, "Detected %d CUDA Capable device(s)\n", len(devs))
	}
	var driver, runtime int // the C sample prints the last device's versions in its summary
	for _, d := range devs {
		p := d.Properties()
		driver, runtime = p.DriverVersion, p.RuntimeVersion
		a, err := readAttrs(ctx, d)
		if err != nil {
			return err
		}
		describe(w, p, a)
	}
	if err := peerMatrix(ctx, w, devs); err != nil {
		return err
	}
	fmt.Fprintf(w, "\ndeviceQuery, CUDA Driver = CUDART, CUDA Driver Version = %s, CUDA Runtime Version = %s, NumDevs = %d\n",
		version(driver), version(runtime), len(devs))
	fmt.Fprintln(w, "Result = PASS")
	return nil
}

// attrs are what the C sample reads with cudaDeviceGetAttribute rather than from
// cudaDeviceProp, and the lines it prints only in some builds.
type attrs struct {
	clockKHz, memoryClockKHz, computeMode int
	gpuOverlap, kernelExecTimeout         bool
	// multiDeviceCoop is printed by a sample built for a runtime before 13.0, which dropped
	// the property; nil on 13.0 and later.
	multiDeviceCoop *bool
	// tcc is printed on Windows only; nil elsewhere.
	tcc *bool
}

// attrCooperativeMultiDeviceLaunch is cudaDevAttrCooperativeMultiDeviceLaunch, which runtimes
// before 13.0 name and 13.0 reserves.
const attrCooperativeMultiDeviceLaunch device.Attribute = 96

// readAttrs asks the device for the attributes the C sample reads itself.
func readAttrs(ctx context.Context, d *device.Device) (attrs, error) {
	var a attrs
	var err error
	get := func(attr device.Attribute) int {
		if err != nil {
			return 0
		}
		var v int
		v, err = d.Attribute(ctx, attr)
		return v
	}
	flag := func(attr device.Attribute) *bool { yes := get(attr) != 0; return &yes }
	a.clockKHz = get(device.AttrClockRate)
	a.memoryClockKHz = get(device.AttrMemoryClockRate)
	a.computeMode = get(device.AttrComputeMode)
	a.gpuOverlap = get(device.AttrGPUOverlap) != 0
	a.kernelExecTimeout = get(device.AttrKernelExecTimeout) != 0
	if d.Properties().RuntimeVersion < 13000 {
		a.multiDeviceCoop = flag(attrCooperativeMultiDeviceLaunch)
	}
	if runtime.GOOS == "windows" {
		a.tcc = flag(device.AttrTCCDriver)
	}
	return a, err
}

// describe prints one device's block of lines.
func describe(w io.Writer, p device.Properties, a attrs) {
	pr := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	pr("\nDevice %d: \"%s\"\n", p.Ordinal, p.Name)
	pr("  CUDA Driver Version / Runtime Version          %s / %s\n", version(p.DriverVersion), version(p.RuntimeVersion))
	pr("  CUDA Capability Major/Minor version number:    %d.%d\n", p.ComputeCapability.Major, p.ComputeCapability.Minor)
	// The C sample divides in single precision: so does this, for the same rounding.
	pr("  Total amount of global memory:                 %.0f MBytes (%d bytes)\n",
		float32(p.TotalMemory)/float32(1048576), p.TotalMemory)
	// The C sample looks the cores up twice while it evaluates printf's arguments, so an
	// unknown SM warns twice before the line.
	perSM, _ := sample.CoresPerSM(w, p.ComputeCapability.Major, p.ComputeCapability.Minor)
	sample.CoresPerSM(w, p.ComputeCapability.Major, p.ComputeCapability.Minor)
	pr("  (%03d) Multiprocessors, (%03d) CUDA Cores/MP:    %d CUDA Cores\n", p.MultiProcessors, perSM, perSM*p.MultiProcessors)
	pr("  GPU Max Clock rate:                            %.0f MHz (%0.2f GHz)\n",
		float32(a.clockKHz)*float32(1e-3), float32(a.clockKHz)*float32(1e-6))
	pr("  Memory Clock rate:                             %.0f Mhz\n", float32(a.memoryClockKHz)*float32(1e-3))
	pr("  Memory Bus Width:                              %d-bit\n", p.MemoryBusWidth)
	if p.L2CacheBytes != 0 {
		pr("  L2 Cache Size:                                 %d bytes\n", p.L2CacheBytes)
	}
	pr("  Maximum Texture Dimension Size (x,y,z)         1D=(%d), 2D=(%d, %d), 3D=(%d, %d, %d)\n",
		p.MaxTexture1D, p.MaxTexture2D[0], p.MaxTexture2D[1], p.MaxTexture3D[0], p.MaxTexture3D[1], p.MaxTexture3D[2])
	pr("  Maximum Layered 1D Texture Size, (num) layers  1D=(%d), %d layers\n", p.MaxTexture1DLayered[0], p.MaxTexture1DLayered[1])
	pr("  Maximum Layered 2D Texture Size, (num) layers  2D=(%d, %d), %d layers\n",
		p.MaxTexture2DLayered[0], p.MaxTexture2DLayered[1], p.MaxTexture2DLayered[2])
	pr("  Total amount of constant memory:               %d bytes\n", p.ConstantMemory)
	pr("  Total amount of shared memory per block:       %d bytes\n", p.SharedMemPerBlock)
	pr("  Total shared memory per multiprocessor:        %d bytes\n", p.SharedMemPerSM)
	pr("  Total number of registers available per block: %d\n", p.RegistersPerBlock)
	pr("  Warp size:                                     %d\n", p.WarpSize)
	pr("  Maximum number of threads per multiprocessor:  %d\n", p.MaxThreadsPerSM)
	pr("  Maximum number of threads per block:           %d\n", p.MaxThreadsPerBlock)
	pr("  Max dimension size of a thread block (x,y,z): (%d, %d, %d)\n", p.MaxBlock.X, p.MaxBlock.Y, p.MaxBlock.Z)
	pr("  Max dimension size of a grid size    (x,y,z): (%d, %d, %d)\n", p.MaxGrid.X, p.MaxGrid.Y, p.MaxGrid.Z)
	pr("  Maximum memory pitch:                          %d bytes\n", p.MaxPitch)
	pr("  Texture alignment:                             %d bytes\n", p.TextureAlignment)
	pr("  Concurrent copy and kernel execution:          %s with %d copy engine(s)\n", yesNo(a.gpuOverlap), p.AsyncEngines)
	pr("  Run time limit on kernels:                     %s\n", yesNo(a.kernelExecTimeout))
	pr("  Integrated GPU sharing Host Memory:            %s\n", yesNo(p.Integrated))
	pr("  Support host page-locked memory mapping:       %s\n", yesNo(p.CanMapHostMemory))
	pr("  Alignment requirement for Surfaces:            %s\n", yesNo(p.SurfaceAlignment != 0))
	ecc := "Disabled"
	if p.ECCEnabled {
		ecc = "Enabled"
	}
	pr("  Device has ECC support:                        %s\n", ecc)
	if a.tcc != nil {
		model := "WDDM (Windows Display Driver Model)"
		if *a.tcc {
			model = "TCC (Tesla Compute Cluster Driver)"
		}
		pr("  CUDA Device Driver Mode (TCC or WDDM):         %s\n", model)
	}
	pr("  Device supports Unified Addressing (UVA):      %s\n", yesNo(p.UnifiedAddressing))
	pr("  Device supports Managed Memory:                %s\n", yesNo(p.ManagedMemory))
	pr("  Device supports Compute Preemption:            %s\n", yesNo(p.ComputePreemption))
	pr("  Supports Cooperative Kernel Launch:            %s\n", yesNo(p.CooperativeLaunch))
	if a.multiDeviceCoop != nil {
		pr("  Supports MultiDevice Co-op Kernel Launch:      %s\n", yesNo(*a.multiDeviceCoop))
	}
	pr("  Device PCI Domain ID / Bus ID / location ID:   %d / %d / %d\n", p.PCIDomain, p.PCIBus, p.PCIDevice)
	pr("  Compute Mode:\n")
	pr("     < %s >\n", computeMode(a.computeMode))
}

// peerMatrix prints, on a machine of two or more devices, whether each can access each
// other's memory directly. The C sample asks only among devices of compute capability 2.0
// and later (every device this runtime supports), and only when two or more qualify.
func peerMatrix(ctx context.Context, w io.Writer, devs []*device.Device) error {
	if len(devs) < 2 {
		return nil
	}
	var p2p []*device.Device
	for _, d := range devs {
		if d.Properties().ComputeCapability.Major >= 2 {
			p2p = append(p2p, d)
		}
	}
	if len(p2p) < 2 {
		return nil
	}
	for _, a := range p2p {
		for _, b := range p2p {
			if a == b {
				continue
			}
			ok, err := interop.CanAccessPeer(ctx, a, b)
			if err != nil && !errors.Is(err, interop.ErrNoPeerAccess) {
				return fmt.Errorf("asking whether GPU%d can access GPU%d: %w", a.Ordinal(), b.Ordinal(), err)
			}
			pa, pb := a.Properties(), b.Properties()
			fmt.Fprintf(w, "> Peer access from %s (GPU%d) -> %s (GPU%d) : %s\n", pa.Name, pa.Ordinal, pb.Name, pb.Ordinal, yesNo(ok))
		}
	}
	return nil
}

// version is a CUDA version number, e.g. 13000, as the C sample prints it: "13.0".
func version(v int) string { return fmt.Sprintf("%d.%d", v/1000, v%100/10) }

func yesNo(b bool) string {
	if b {
		return "Yes"
	}
	return "No"
}

// computeModes are the cudaComputeMode values' descriptions, by value.
var computeModes = []string{
	"Default (multiple host threads can use ::cudaSetDevice() with device simultaneously)",
	"Exclusive (only one host thread in one process is able to use ::cudaSetDevice() with this device)",
	"Prohibited (no host thread can use ::cudaSetDevice() with this device)",
	"Exclusive Process (many threads in one process is able to use ::cudaSetDevice() with this device)",
}

func computeMode(m int) string {
	if m < 0 || m >= len(computeModes) {
		return "Unknown"
	}
	return computeModes[m]
}
