// Command simpleoccupancy is NVIDIA's simpleOccupancy sample done the gpuactor way: it squares
// a million ints twice, first with a hand-picked block size of 32 threads, then with the block
// size the occupancy calculator suggests (Kernel.MaxPotentialBlockSize, the runtime's
// cudaOccupancyMaxPotentialBlockSize template written in Go), and prints for each the
// potential occupancy (Kernel.MaxActiveBlocksPerSM as active warps over the multiprocessor's
// warps) and the kernel's time, then PASSED when every square is right.
//
//	go run ./examples/simpleoccupancy
//	go run ./examples/simpleoccupancy -backend sim
//
// The lines it prints are the C sample's, so that examples/compare can set them side by side.
package main

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"time"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/examples/internal/sample"
	"github.com/gpuactor/gpuactor/streams"
)

// source is the sample's square kernel, extern "C" so that it is found by name; like the
// sample's it declares dynamic shared memory it does not use.
const source = `
extern "C" __global__ void square(int* array, int arrayCount) {
    extern __shared__ int dynamicSmem[];
    int idx = threadIdx.x + blockIdx.x * blockDim.x;
    if (idx < arrayCount) {
        array[idx] *= array[idx];
    }
}
`

// simKernels is square for the simulator.
var simKernels = map[string]cuda.SimKernel{
	"square": func(c *cuda.KernelCall) error {
		n := int(c.Int32(1))
		a := cuda.SimSlice[int32](c, 0, n)
		for i := range min(uint64(n), c.Threads()) {
			a[i] *= a[i]
		}
		return nil
	},
}

// manualBlockSize is the sample's hand-picked block size: too small for full occupancy.
const manualBlockSize = 32

type config struct {
	count int // elements squared
	sample.Flags
}

func main() {
	c := config{}
	flag.IntVar(&c.count, "count", 1000000, "ints to square")
	c.Register()
	flag.Parse()
	sample.Finish(run(c))
}

func run(c config) (err error) {
	if c.count <= 0 {
		return fmt.Errorf("-count must be positive")
	}
	ctx := context.Background()
	dev, err := device.Open(ctx, c.Ordinal, c.Options()...)
	if err != nil {
		return err
	}
	defer sample.Keep(&err, dev.Close)
	mod, err := dev.Compile(ctx, device.Source{Name: "simpleoccupancy.cu", Code: source, Sim: simKernels})
	if err != nil {
		return err
	}
	defer sample.Keep(&err, func() error { return mod.Close(ctx) })
	k, err := mod.Kernel(ctx, "square")
	if err != nil {
		return err
	}

	fmt.Print("starting Simple Occupancy\n\n")
	fmt.Printf("[ Manual configuration with %d threads per block ]\n", manualBlockSize)
	if err := test(ctx, dev, k, c.count, false); err != nil {
		return err
	}
	fmt.Println()
	fmt.Println("[ Automatic, occupancy-based configuration ]")
	if err := test(ctx, dev, k, c.count, true); err != nil {
		return err
	}
	fmt.Print("\nTest PASSED\n\n")
	return nil
}

// test fills an array with 0…count-1, squares it on the device with the chosen launch
// configuration and checks every element.
func test(ctx context.Context, dev *device.Device, k *device.Kernel, count int, automatic bool) (err error) {
	array := make([]int32, count)
	for i := range array {
		array[i] = int32(i)
	}
	d, err := dev.MallocBytes(ctx, uint64(4*count))
	if err != nil {
		return err
	}
	defer sample.Keep(&err, func() error { return d.Close(ctx) })
	s := streams.Default(dev)
	if err := streams.CopyToDevice(ctx, s, d, array).Wait(ctx); err != nil {
		return err
	}
	clear(array)
	if err := launchConfig(ctx, dev, k, d, count, automatic); err != nil {
		return err
	}
	if err := streams.CopyFromDevice(ctx, s, array, d).Wait(ctx); err != nil {
		return err
	}
	for i, v := range array {
		if want := int32(i * i); v != want { // wraps as the C int product does
			return fmt.Errorf("element %d expected %d actual %d", i, want, v)
		}
	}
	return nil
}

// launchConfig picks the block size (the calculator's with automatic, else manualBlockSize),
// launches square between two events, and prints the potential occupancy and the time.
func launchConfig(ctx context.Context, dev *device.Device, k *device.Kernel, d device.Mem, count int, automatic bool) (err error) {
	const dynamicSMemUsage = 0
	blockSize := manualBlockSize
	if automatic {
		minGridSize, size, err := k.MaxPotentialBlockSizeFixed(ctx, dynamicSMemUsage, count)
		if err != nil {
			return err
		}
		blockSize = size
		fmt.Printf("Suggested block size: %d\nMinimum grid size for maximum occupancy: %d\n", blockSize, minGridSize)
	}
	gridSize := (count + blockSize - 1) / blockSize

	start, err := streams.NewEvent(ctx, dev)
	if err != nil {
		return err
	}
	defer sample.Keep(&err, func() error { return start.Close(ctx) })
	end, err := streams.NewEvent(ctx, dev)
	if err != nil {
		return err
	}
	defer sample.Keep(&err, func() error { return end.Close(ctx) })
	s := streams.Default(dev)
	cfg := cuda.LaunchConfig{Grid: cuda.Dim(uint32(gridSize)), Block: cuda.Dim(uint32(blockSize)), SharedMem: dynamicSMemUsage}
	rec := s.Record(ctx, start)
	launch := s.Launch(ctx, k, cfg, d, int32(count))
	if err := s.Record(ctx, end).Wait(ctx); err != nil {
		return err
	}
	if err := rec.Wait(ctx); err != nil {
		return err
	}
	if err := launch.Wait(ctx); err != nil {
		return err
	}

	occupancy, err := potentialOccupancy(ctx, dev, k, blockSize, dynamicSMemUsage)
	if err != nil {
		return err
	}
	fmt.Printf("Potential occupancy: %s%%\n", cout(occupancy*100))
	elapsed, err := streams.Elapsed(ctx, start, end)
	if err != nil {
		return err
	}
	fmt.Printf("Elapsed time: %sms\n", cout(float64(elapsed)/float64(time.Millisecond)))
	return nil
}

// potentialOccupancy is the sample's reportPotentialOccupancy: active warps over the most a
// multiprocessor holds.
func potentialOccupancy(ctx context.Context, dev *device.Device, k *device.Kernel, blockSize, dynamicSMem int) (float64, error) {
	numBlocks, err := k.MaxActiveBlocksPerSM(ctx, blockSize, dynamicSMem)
	if err != nil {
		return 0, err
	}
	p := dev.Properties()
	activeWarps := numBlocks * blockSize / p.WarpSize
	maxWarps := p.MaxThreadsPerSM / p.WarpSize
	return float64(activeWarps) / float64(maxWarps), nil
}

// cout formats x as std::cout does by default: six significant digits, no trailing zeros.
func cout(x float64) string { return strconv.FormatFloat(x, 'g', 6, 64) }
