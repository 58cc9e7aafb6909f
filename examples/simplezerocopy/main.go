// Command simplezerocopy is NVIDIA's simpleZeroCopy sample (cuda-samples, 0_Introduction)
// done with gpuactor: a kernel adds two vectors of 1,048,576 floats that live in the host's
// memory, mapped into the GPU's address space, and writes the sum there too, so that nothing
// is copied. The host memory is either allocated mapped (cudaHostAlloc with
// cudaHostAllocMapped, alloc.MallocPinned with alloc.Mapped: the default) or allocated by Go,
// aligned to 4 KiB and page-locked and mapped in place (cudaHostRegister with
// cudaHostRegisterMapped, alloc.Register with alloc.RegisterMapped: -use_generic_memory). The
// host then checks the sum: the norm of its error relative to the norm of the sum must be
// below 1e-6. It prints the C sample's lines, then PASS or FAIL (the C sample says which only
// with its exit status).
//
//	go run ./examples/simplezerocopy                       # the C sample's 1,048,576 floats
//	go run ./examples/simplezerocopy -use_generic_memory   # Go memory, registered
//	go run ./examples/simplezerocopy -backend sim -n 1000  # a size the simulator runs quickly
//
// The vectors are what the C sample's rand() gives on Linux (glibc's generator, never seeded),
// so both programs add the same numbers.
//
// Differences from the C sample, and why:
//
//   - Device flags. The C sample calls cudaSetDeviceFlags(cudaDeviceMapHost). gpuactor sets no
//     device flags: under unified addressing, which every GPU that CUDA 11.8 and later runs on
//     has, host memory allocated or registered as mapped is mapped whatever the flags.
//   - The launch. The C sample launches on the legacy default stream and waits with
//     cudaDeviceSynchronize. gpuactor never queues work on stream 0: the port launches on the
//     device's own stream (streams.Default) and waits with Device.Synchronize.
//   - The compute-capability line. The C sample prints it from checkCudaCapabilities before it
//     calls cudaSetDevice, so it always describes device 0; the port describes the device it
//     runs on.
//
// Nothing is timed, in either program.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"unsafe"

	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/examples/internal/sample"
	"github.com/gpuactor/gpuactor/streams"
)

// The sample's sizes: the vectors' length, the block size, and the alignment of the
// registered memory.
const (
	nelem           = 1048576
	threads         = 256
	memoryAlignment = 4096
)

// source is simpleZeroCopy's kernel: c = a + b, one thread an element.
const source = `
extern "C" __global__ void vectorAddGPU(float* a, float* b, float* c, int N) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < N) c[idx] = a[idx] + b[idx];
}
`

// simKernels is vectorAddGPU for the simulator, which maps pinned host memory into its
// kernels' address space as a GPU does: the vectors' device addresses are the host's memory.
func simKernels() map[string]cuda.SimKernel {
	return map[string]cuda.SimKernel{
		"vectorAddGPU": func(c *cuda.KernelCall) error {
			n := int(min(uint64(max(c.Int32(3), 0)), c.Threads()))
			a, b, sum := cuda.SimSlice[float32](c, 0, n), cuda.SimSlice[float32](c, 1, n), cuda.SimSlice[float32](c, 2, n)
			for i := range sum {
				sum[i] = a[i] + b[i]
			}
			return nil
		},
	}
}

type config struct {
	n                int  // floats in each vector (the C sample's nelem)
	useGenericMemory bool // the C sample's --use_generic_memory
	deviceSet        bool // -device was given
	sample.Flags
	opts []device.Option // more device options (tests)
}

// errNoMapping: the device cannot map host memory; the C sample then exits with status 0.
var errNoMapping = errors.New("the device cannot map host memory")

func main() {
	var c config
	flag.IntVar(&c.n, "n", nelem, "floats in each vector")
	flag.BoolVar(&c.useGenericMemory, "use_generic_memory", false, "use Go memory, 4 KiB-aligned and registered (cudaHostRegister), instead of cudaHostAlloc")
	c.Register()
	flag.Parse()
	flag.Visit(func(f *flag.Flag) { c.deviceSet = c.deviceSet || f.Name == "device" })
	err := run(c)
	if errors.Is(err, errNoMapping) {
		os.Exit(0)
	}
	sample.Finish(err)
}

// vector is one of the three vectors: its memory as the host sees it, the address the kernel
// uses, and its release.
type vector struct {
	host    []float32
	dev     cuda.DevicePtr
	release func(context.Context) error
}

func run(c config) (err error) {
	if c.n <= 0 {
		return errors.New("-n must be positive")
	}
	ctx := context.Background()
	opts := append(c.Options(), c.opts...)
	ordinal := c.Ordinal
	if c.deviceSet {
		count, err := device.Count(ctx, opts...)
		if err != nil {
			return err
		}
		if ordinal >= count || ordinal < 0 {
			fmt.Fprintf(os.Stderr, "Device number %d is invalid, will use default CUDA device 0.\n", ordinal)
			ordinal = 0
		}
	}
	dev, err := device.Open(ctx, ordinal, opts...)
	if err != nil {
		return err
	}
	defer sample.Keep(&err, dev.Close)
	p := dev.Properties()
	major, minor := p.ComputeCapability.Major, p.ComputeCapability.Minor
	fmt.Printf("  Device %d: <%16s >, Compute SM %d.%d detected\n", dev.Ordinal(), sample.ArchName(os.Stdout, major, minor), major, minor)
	sample.Describe(dev)

	if c.useGenericMemory {
		fmt.Println("> Using Generic System Paged Memory (malloc)")
	} else {
		fmt.Println("> Using CUDA Host Allocated (cudaHostAlloc)")
	}
	if !p.CanMapHostMemory {
		fmt.Fprintf(os.Stderr, "Device %d does not support mapping CPU host memory!\n", dev.Ordinal())
		return errNoMapping
	}

	mod, err := dev.Compile(ctx, device.Source{Name: "simplezerocopy.cu", Code: source, Sim: simKernels()})
	if err != nil {
		return err
	}
	defer sample.Keep(&err, func() error { return mod.Close(ctx) })
	kern, err := mod.Kernel(ctx, "vectorAddGPU")
	if err != nil {
		return err
	}

	// Allocate the mapped vectors; the release below frees them, or this on an early return.
	var vs []vector
	release := func() error {
		var errs []error
		for _, v := range vs {
			errs = append(errs, v.release(ctx))
		}
		vs = nil
		return errors.Join(errs...)
	}
	defer sample.Keep(&err, release)
	for range 3 {
		allocate := hostAlloc
		if c.useGenericMemory {
			allocate = registered
		}
		v, err := allocate(ctx, dev, c.n)
		if err != nil {
			return err
		}
		vs = append(vs, v)
	}
	a, b, sum := vs[0].host, vs[1].host, vs[2].host

	// Initialize the vectors: a[n] and b[n] from one rand() sequence, in turn.
	rng := sample.NewCRand()
	for n := range a {
		a[n] = float32(rng.Next()) / float32(math.MaxInt32)
		b[n] = float32(rng.Next()) / float32(math.MaxInt32)
	}

	fmt.Println("> vectorAddGPU kernel will add vectors using mapped CPU memory...")
	grid := uint32(math.Ceil(float64(float32(c.n) / float32(threads)))) // ceil of a float quotient, as in C
	cfg := cuda.LaunchConfig{Grid: cuda.Dim(grid), Block: cuda.Dim(threads)}
	launch := streams.Default(dev).Launch(ctx, kern, cfg, vs[0].dev, vs[1].dev, vs[2].dev, int32(c.n))
	if err := errors.Join(dev.Synchronize(ctx), launch.Wait(ctx)); err != nil {
		return fmt.Errorf("vectorAddGPU() execution failed: %w", err)
	}

	fmt.Println("> Checking the results from vectorAddGPU() ...")
	errorNorm, refNorm := norms(a, b, sum)

	fmt.Println("> Releasing CPU memory...")
	if err := release(); err != nil {
		return err
	}
	if !(errorNorm/refNorm < 1e-6) {
		return fmt.Errorf("the error's norm %g is not below 1e-6 of the sum's norm %g", errorNorm, refNorm)
	}
	return nil
}

// norms is the C sample's check: the norms of c - (a + b) and of a + b, summed in float.
func norms(a, b, c []float32) (errorNorm, refNorm float32) {
	for n := range a {
		ref := a[n] + b[n]
		diff := c[n] - ref
		errorNorm += diff * diff
		refNorm += ref * ref
	}
	return float32(math.Sqrt(float64(errorNorm))), float32(math.Sqrt(float64(refNorm)))
}

// hostAlloc allocates n floats of pinned host memory mapped into the device's address space
// (cudaHostAlloc with cudaHostAllocMapped) and asks for their device address
// (cudaHostGetDevicePointer).
func hostAlloc(ctx context.Context, dev *device.Device, n int) (vector, error) {
	p, err := alloc.MallocPinned[float32](ctx, dev, n, alloc.Mapped)
	if err != nil {
		return vector{}, err
	}
	d, err := p.DevicePtr(ctx)
	if err != nil {
		return vector{}, errors.Join(err, p.Close(ctx))
	}
	return vector{host: p.Host(), dev: d, release: p.Close}, nil
}

// registered allocates n floats of Go memory with 4 KiB to spare, aligns its start up to
// 4 KiB, page-locks and maps the n floats from there (cudaHostRegister with
// cudaHostRegisterMapped) and asks for their device address.
func registered(ctx context.Context, dev *device.Device, n int) (vector, error) {
	raw := make([]float32, n+memoryAlignment/4)
	addr := uintptr(unsafe.Pointer(unsafe.SliceData(raw)))
	off := int((memoryAlignment-addr%memoryAlignment)%memoryAlignment) / 4
	r, err := alloc.Register(ctx, dev, raw[off:off+n:off+n], alloc.RegisterMapped)
	if err != nil {
		return vector{}, err
	}
	d, err := r.DevicePtr(ctx)
	if err != nil {
		return vector{}, errors.Join(err, r.Close(ctx))
	}
	return vector{host: r.Host(), dev: d, release: r.Close}, nil
}
