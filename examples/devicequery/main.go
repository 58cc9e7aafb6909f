// Command devicequery prints every device's properties, like NVIDIA's deviceQuery sample.
//
//	go run ./examples/devicequery            # the real GPUs, or the simulator without one
//	go run ./examples/devicequery -backend sim
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/examples/internal/sample"
)

func main() {
	backend := flag.String("backend", "", "cuda, sim or auto (default: $GPUACTOR_BACKEND, else auto)")
	flag.Parse()
	if err := run(*backend); err != nil {
		fmt.Println("devicequery: FAIL:", err)
		os.Exit(1)
	}
	fmt.Println("Result = PASS")
}

func run(backend string) error {
	ctx := context.Background()
	devs, err := device.OpenAll(ctx, sample.Options(backend, false)...)
	if err != nil {
		return err
	}
	defer func() {
		for _, d := range devs {
			d.Close()
		}
	}()
	if len(devs) == 0 {
		return fmt.Errorf("no devices")
	}
	p0 := devs[0].Properties()
	fmt.Printf("Detected %d device(s) on the %s backend (runtime %s, driver %s)\n\n",
		len(devs), p0.Backend, version(p0.RuntimeVersion), version(p0.DriverVersion))
	for _, d := range devs {
		free, total, err := d.MemInfo(ctx)
		if err != nil {
			return err
		}
		p := d.Properties()
		w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintf(w, "Device %d: %q\n", p.Ordinal, p.Name)
		row := func(k string, v any) { fmt.Fprintf(w, "  %s:\t%v\n", k, v) }
		row("Compute capability", p.ComputeCapability)
		row("PCI bus id", p.PCIBusID)
		row("Global memory", fmt.Sprintf("%.0f MiB (%d bytes), %.0f MiB free", mib(total), total, mib(free)))
		row("Multiprocessors", p.MultiProcessors)
		row("GPU clock", fmt.Sprintf("%.0f MHz", float64(p.ClockKHz)/1e3))
		row("Memory clock", fmt.Sprintf("%.0f MHz", float64(p.MemoryClockKHz)/1e3))
		row("Memory bus width", fmt.Sprintf("%d bits", p.MemoryBusWidth))
		row("Peak memory bandwidth", fmt.Sprintf("%.0f GB/s", p.MemoryBandwidth()/1e9))
		row("L2 cache", fmt.Sprintf("%d bytes", p.L2CacheBytes))
		row("Constant memory", fmt.Sprintf("%d bytes", p.ConstantMemory))
		row("Shared memory per block", fmt.Sprintf("%d bytes (%d with opt-in)", p.SharedMemPerBlock, p.SharedMemPerBlockOptin))
		row("Registers per block", p.RegistersPerBlock)
		row("Warp size", p.WarpSize)
		row("Max threads per multiprocessor", p.MaxThreadsPerSM)
		row("Max threads per block", p.MaxThreadsPerBlock)
		row("Max block", fmt.Sprintf("(%d, %d, %d)", p.MaxBlock.X, p.MaxBlock.Y, p.MaxBlock.Z))
		row("Max grid", fmt.Sprintf("(%d, %d, %d)", p.MaxGrid.X, p.MaxGrid.Y, p.MaxGrid.Z))
		row("Copy engines", p.AsyncEngines)
		row("Concurrent kernels", yes(p.ConcurrentKernels))
		row("Unified addressing", yes(p.UnifiedAddressing))
		row("Managed memory", yes(p.ManagedMemory))
		row("Map host memory", yes(p.CanMapHostMemory))
		row("Memory pools", yes(p.MemoryPoolsSupported))
		row("Stream priorities", yes(p.StreamPrioritiesSupported))
		row("Cooperative launch", yes(p.CooperativeLaunch))
		row("ECC", yes(p.ECCEnabled))
		row("Integrated", yes(p.Integrated))
		if err := w.Flush(); err != nil {
			return err
		}
		fmt.Println()
	}
	return nil
}

func version(v int) string {
	if v == 0 {
		return "none"
	}
	return fmt.Sprintf("%d.%d", v/1000, v%1000/10)
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

func yes(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
