// Command simplep2p is NVIDIA's simpleP2P sample done the gpuactor way: it finds the first
// pair of GPUs that can access each other's memory, enables peer access both ways, times 100
// copies of 64 MiB between them, then has a kernel on each GPU read the other's memory
// directly (dst = src * 2, twice), and checks the result on the host. It prints what the C
// sample prints; on a machine with fewer than two GPUs, or none with peer access, it prints
// the C sample's waiver lines and exits with its waiver status (2).
//
//	go run ./examples/simplep2p
//	go run ./examples/simplep2p -backend sim   # the simulator's two devices are linked
//
// The copies are queued back to back on one stream, as the C sample's are: its cudaMemcpy
// calls copy from device to device, which the runtime does not make the host wait for, so
// the hundred run one after another on the GPU; events on the copying stream time them all.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/examples/internal/sample"
	"github.com/gpuactor/gpuactor/interop"
	"github.com/gpuactor/gpuactor/sim"
	"github.com/gpuactor/gpuactor/streams"
)

// The sample's sizes: 16 Mi floats per buffer, launched as blocks of 512 threads.
const (
	elems   = 1024 * 1024 * 16
	bufSize = elems * 4
	threads = 512
	copies  = 100
)

// exitWaived is the cuda-samples' EXIT_WAIVED: the test could not run on this machine.
const exitWaived = 2

// source is simpleP2P's kernel.
const source = `
extern "C" __global__ void SimpleKernel(float *src, float *dst) {
    const int idx = blockIdx.x * blockDim.x + threadIdx.x;
    dst[idx] = src[idx] * 2.0f;
}
`

// simKernels is SimpleKernel for the simulator. src and dst lie on different devices: the
// simulator lets a kernel touch another device's memory only while peer access to it is
// enabled, as a GPU does.
var simKernels = map[string]cuda.SimKernel{
	"SimpleKernel": func(c *cuda.KernelCall) error {
		n := int(c.Threads())
		src := cuda.SimSlice[float32](c, 0, n)
		dst := cuda.SimSlice[float32](c, 1, n)
		for i := range dst {
			dst[i] = src[i] * 2
		}
		return nil
	},
}

// errWaived: the machine cannot run the sample (fewer than two GPUs, or no peer access).
var errWaived = errors.New("waived")

// errVerify: the data read back is wrong.
var errVerify = errors.New("verification failed")

type config struct {
	sample.Flags
	sim *sim.Simulator // the simulated machine to use instead of the default one (tests)
}

func main() {
	var c config
	c.RegisterBackend()
	flag.Parse()
	switch err := run(c, os.Args[0]); {
	case errors.Is(err, errWaived):
		os.Exit(exitWaived)
	case errors.Is(err, errVerify):
		fmt.Println("Test failed!")
		os.Exit(1)
	case err != nil:
		fmt.Println("FAIL:", err)
		os.Exit(1)
	}
	fmt.Println("Test passed")
}

func run(c config, prog string) (err error) {
	ctx := context.Background()
	fmt.Printf("[%s] - Starting...\n", prog)
	fmt.Println("Checking for multiple GPUs...")
	opts := c.OptionsOn(c.sim)
	n, err := device.Count(ctx, opts...)
	if err != nil {
		return err
	}
	fmt.Printf("CUDA-capable device count: %d\n", n)
	if n < 2 {
		fmt.Printf("Two or more GPUs with Peer-to-Peer access capability are required for %s.\n", prog)
		fmt.Println("Waiving test.")
		return errWaived
	}
	devs, err := device.OpenAll(ctx, opts...)
	if err != nil {
		return err
	}
	defer sample.CloseAll(&err, devs)

	fmt.Print("\nChecking GPU(s) for support of peer to peer memory access...\n")
	pair, err := firstPeerPair(devs, func(a, b *device.Device) (bool, error) { return interop.CanAccessPeer(ctx, a, b) })
	if err != nil {
		return err
	}
	if pair == nil {
		fmt.Printf("Two or more GPUs with Peer-to-Peer access capability are required for %s.\n", prog)
		fmt.Println("Peer to Peer access is not available amongst GPUs in the system, waiving test.")
		return errWaived
	}
	d0, d1 := pair[0], pair[1]
	id0, id1 := d0.Ordinal(), d1.Ordinal()

	fmt.Printf("Enabling peer access between GPU%d and GPU%d...\n", id0, id1)
	if err := interop.EnablePeerAccess(ctx, d0, d1); err != nil {
		return err
	}
	if err := interop.EnablePeerAccess(ctx, d1, d0); err != nil {
		return err
	}

	fmt.Printf("Allocating buffers (%dMB on GPU%d, GPU%d and CPU Host)...\n", bufSize/1024/1024, id0, id1)
	g0, err := d0.MallocBytes(ctx, bufSize)
	if err != nil {
		return err
	}
	defer sample.Keep(&err, func() error { return g0.Close(ctx) })
	g1, err := d1.MallocBytes(ctx, bufSize)
	if err != nil {
		return err
	}
	defer sample.Keep(&err, func() error { return g1.Close(ctx) })
	h0, err := d0.MallocPinnedBytes(ctx, bufSize)
	if err != nil {
		return err
	}
	defer sample.Keep(&err, func() error { return h0.Close(ctx) })

	fmt.Println("Creating event handles...")
	s0, s1 := streams.Default(d0), streams.Default(d1)
	start, err := streams.NewEvent(ctx, d1, streams.BlockingSync)
	if err != nil {
		return err
	}
	defer sample.Keep(&err, func() error { return start.Close(ctx) })
	stop, err := streams.NewEvent(ctx, d1, streams.BlockingSync)
	if err != nil {
		return err
	}
	defer sample.Keep(&err, func() error { return stop.Close(ctx) })

	// 100 copies, alternating direction, queued in order on one stream: a device-to-device
	// cudaMemcpy returns before the copy ends, so the C sample's copies queue the same way.
	// Each copy's future is kept and checked after the stop event.
	if err := s1.Record(ctx, start).Wait(ctx); err != nil {
		return err
	}
	queued := make([]*streams.Future, 0, copies)
	for i := range copies {
		dst, src := g1, g0
		if i%2 == 1 {
			dst, src = g0, g1
		}
		queued = append(queued, s1.Copy(ctx, dst, src))
	}
	if err := s1.Record(ctx, stop).Wait(ctx); err != nil {
		return err
	}
	for _, f := range queued {
		if err := f.Wait(ctx); err != nil {
			return err
		}
	}
	elapsed, err := streams.Elapsed(ctx, start, stop)
	if err != nil {
		return err
	}
	ms := float32(elapsed.Seconds() * 1000)
	fmt.Printf("cudaMemcpyPeer / cudaMemcpy between GPU%d and GPU%d: %.2fGB/s\n", id0, id1,
		(1/(ms/1000))*(copies*float32(bufSize))/1024/1024/1024)

	fmt.Printf("Preparing host buffer and memcpy to GPU%d...\n", id0)
	host := device.HostSlice[float32](h0)
	for i := range host {
		host[i] = float32(i % 4096)
	}
	if err := s0.CopyHostToDevice(ctx, g0, h0).Wait(ctx); err != nil {
		return err
	}

	// A launch takes another device's memory by address: peer access is what makes it legal.
	p0, err := g0.DevicePtr(ctx)
	if err != nil {
		return err
	}
	p1, err := g1.DevicePtr(ctx)
	if err != nil {
		return err
	}
	cfg := cuda.LaunchConfig{Grid: cuda.Dim(elems / threads), Block: cuda.Dim(threads)}
	fmt.Printf("Run kernel on GPU%d, taking source data from GPU%d and writing to GPU%d...\n", id1, id0, id1)
	if err := launch(ctx, d1, cfg, p0, p1); err != nil {
		return err
	}
	fmt.Printf("Run kernel on GPU%d, taking source data from GPU%d and writing to GPU%d...\n", id0, id1, id0)
	if err := launch(ctx, d0, cfg, p1, p0); err != nil {
		return err
	}

	fmt.Printf("Copy data back to host from GPU%d and verify results...\n", id0)
	if err := s0.CopyDeviceToHost(ctx, h0, g0).Wait(ctx); err != nil {
		return err
	}
	errorCount := verify(host)

	fmt.Println("Disabling peer access...")
	if err := interop.DisablePeerAccess(ctx, d0, d1); err != nil {
		return err
	}
	if err := interop.DisablePeerAccess(ctx, d1, d0); err != nil {
		return err
	}
	fmt.Println("Shutting down...")
	if errorCount != 0 {
		return errVerify
	}
	return nil
}

// firstPeerPair is the C sample's search over every ordered pair of GPUs: it prints whether
// the first of each pair can access the second's memory (canAccess), every pair, and returns
// the first pair that can, in that order; nil when none can. On a machine of more than two
// GPUs that pair need not be GPU0 and GPU1.
func firstPeerPair(devs []*device.Device, canAccess func(a, b *device.Device) (bool, error)) ([]*device.Device, error) {
	var pair []*device.Device
	for _, a := range devs {
		for _, b := range devs {
			if a == b {
				continue
			}
			can, err := canAccess(a, b)
			if err != nil {
				return nil, err
			}
			fmt.Printf("> Peer access from %s (GPU%d) -> %s (GPU%d) : %s\n",
				a.Properties().Name, a.Ordinal(), b.Properties().Name, b.Ordinal(), yesNo(can))
			if can && pair == nil {
				pair = []*device.Device{a, b}
			}
		}
	}
	return pair, nil
}

// launch compiles SimpleKernel on d (a module belongs to one device) and runs it on d's
// stream with src and dst, waiting for it as the C sample's cudaDeviceSynchronize does.
func launch(ctx context.Context, d *device.Device, cfg cuda.LaunchConfig, src, dst cuda.DevicePtr) error {
	mod, err := d.Compile(ctx, device.Source{Name: "simplep2p.cu", Code: source, Sim: simKernels})
	if err != nil {
		return err
	}
	k, err := mod.Kernel(ctx, "SimpleKernel")
	if err != nil {
		return err
	}
	return streams.Default(d).Launch(ctx, k, cfg, src, dst).Wait(ctx)
}

// verify is the C sample's check: every element is (i % 4096) * 2 * 2; it prints the first
// dozen errors and returns how many it saw.
func verify(h []float32) int {
	count := 0
	for i, v := range h {
		ref := float32(i%4096) * 2 * 2
		if v != ref {
			fmt.Printf("Verification error @ element %d: val = %f, ref = %f\n", i, v, ref)
			if count++; count > 11 {
				break
			}
		}
	}
	return count
}

func yesNo(b bool) string {
	if b {
		return "Yes"
	}
	return "No"
}
