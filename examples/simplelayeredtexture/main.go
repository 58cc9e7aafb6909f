// Command simplelayeredtexture is NVIDIA's simpleLayeredTexture sample (cuda-samples,
// 0_Introduction) done with gpuactor: a layered 2D texture of 5 layers of 512×512 floats
// (texel i of every layer holds i) is read back by a kernel, one launch a layer, through
// tex2DLayered with normalized coordinates, linear filtering and wrap addressing at texel
// centres, and each value written negated plus its layer. The host checks every output against
// that transformation within 5e-3, as the C sample's compareData does, and times the five
// launches. It prints the C sample's lines, then PASS or FAIL (the C sample says which only
// with its exit status).
//
//	go run ./examples/simplelayeredtexture
//	go run ./examples/simplelayeredtexture -backend sim
//
// Differences from the C sample, and why:
//
//   - The copy into the array. The C sample copies the host data with one synchronous
//     cudaMemcpy3D; the port copies it with alloc.CopyToArray on the device's own stream
//     (through pinned staging) and waits for it.
//   - The launches. The C sample launches on the legacy default stream and waits with
//     cudaDeviceSynchronize; gpuactor never queues work on stream 0: the port launches on the
//     device's own stream and waits with Device.Synchronize. Both time the five launches and
//     that wait.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/examples/internal/sample"
	"github.com/gpuactor/gpuactor/streams"
	"github.com/gpuactor/gpuactor/textures"
)

const sdkName = "simpleLayeredTexture"

// minEpsilonError is the C sample's MIN_EPSILON_ERROR.
const minEpsilonError = 5e-3

// source is simpleLayeredTexture's kernel.
const source = `
extern "C" __global__ void transformKernel(float* g_odata, int width, int height, int layer, cudaTextureObject_t tex) {
    unsigned int x = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int y = blockIdx.y * blockDim.y + threadIdx.y;
    // 0.5f offset and division are necessary to access the original data points
    // in the texture (such that bilinear interpolation will not be activated).
    float u = (x + 0.5f) / (float)width;
    float v = (y + 0.5f) / (float)height;
    g_odata[layer * width * height + y * width + x] = -tex2DLayered<float>(tex, u, v, layer) + layer;
}
`

// simKernels is transformKernel for the simulator: every thread of the grid, in turn.
var simKernels = map[string]cuda.SimKernel{
	"transformKernel": func(c *cuda.KernelCall) error {
		width, height, layer := c.Int32(1), c.Int32(2), c.Int32(3)
		tex := c.TextureArg(4)
		out := cuda.SimSlice[float32](c, 0, int(width*height*(layer+1)))
		nx, ny := c.Grid.X*c.Block.X, c.Grid.Y*c.Block.Y
		for y := uint32(0); y < ny; y++ {
			for x := uint32(0); x < nx; x++ {
				u := (float32(x) + 0.5) / float32(width)
				v := (float32(y) + 0.5) / float32(height)
				out[int(layer)*int(width*height)+int(y)*int(width)+int(x)] = -cuda.SimTex2DLayered[float32](c, tex, u, v, layer) + float32(layer)
			}
		}
		return nil
	},
}

type config struct {
	width, height, layers int
	sample.Flags
	opts []device.Option // more device options (tests)
}

func main() {
	c := config{width: 512, height: 512, layers: 5}
	c.Register()
	flag.Parse()
	sample.Finish(run(c))
}

func run(c config) (err error) {
	fmt.Printf("[%s] - Starting...\n", sdkName)
	ctx := context.Background()
	dev, err := device.Open(ctx, c.Ordinal, append(c.Options(), c.opts...)...)
	if err != nil {
		return err
	}
	defer sample.Keep(&err, dev.Close)
	p := dev.Properties()
	major, minor := p.ComputeCapability.Major, p.ComputeCapability.Minor
	fmt.Printf("GPU Device %d: \"%s\" with compute capability %d.%d\n\n", dev.Ordinal(), sample.ArchName(os.Stdout, major, minor), major, minor)
	fmt.Printf("CUDA device [%s] has %d Multi-Processors ", p.Name, p.MultiProcessors)
	fmt.Printf("SM %d.%d\n", major, minor)

	width, height, layers := c.width, c.height, c.layers
	n := width * height * layers
	hData := make([]float32, n)
	for layer := 0; layer < layers; layer++ {
		for i := 0; i < width*height; i++ {
			hData[layer*width*height+i] = float32(i)
		}
	}
	ref := make([]float32, n)
	for layer := 0; layer < layers; layer++ {
		for i := 0; i < width*height; i++ {
			ref[layer*width*height+i] = -hData[layer*width*height+i] + float32(layer)
		}
	}

	mod, err := dev.Compile(ctx, device.Source{Name: "simpleLayeredTexture.cu", Code: source, Sim: simKernels})
	if err != nil {
		return err
	}
	defer sample.Keep(&err, func() error { return mod.Close(ctx) })
	k, err := mod.Kernel(ctx, "transformKernel")
	if err != nil {
		return err
	}
	dData, err := dev.MallocBytes(ctx, uint64(4*n))
	if err != nil {
		return err
	}
	defer sample.Keep(&err, func() error { return dData.Close(ctx) })

	// cudaCreateChannelDesc(32, 0, 0, 0, cudaChannelFormatKindFloat)
	arr, err := alloc.NewArray(ctx, dev, cuda.Channels[float32](1), alloc.Extent{W: width, H: height, D: layers}, alloc.Layered())
	if err != nil {
		return err
	}
	defer sample.Keep(&err, func() error { return arr.Close(ctx) })
	s := streams.Default(dev)
	if err := alloc.CopyToArray(ctx, s, arr, arr.Whole(), hData).Wait(ctx); err != nil {
		return err
	}
	tex, err := textures.New(ctx, dev, textures.FromArray(arr), textures.Desc{
		Normalized: true,
		Filter:     textures.Linear,
		Address:    [3]textures.AddressMode{textures.Wrap, textures.Wrap},
		Read:       textures.ElementType,
	})
	if err != nil {
		return err
	}
	defer sample.Keep(&err, func() error { return tex.Close(ctx) })

	block := cuda.Dim(8, 8, 1)
	grid := cuda.Dim(uint32(width)/block.X, uint32(height)/block.Y, 1)
	fmt.Printf("Covering 2D data array of %d x %d: Grid size is %d x %d, each block has 8 x 8 threads\n", width, height, grid.X, grid.Y)
	cfg := cuda.LaunchConfig{Grid: grid, Block: block}
	if err := s.Launch(ctx, k, cfg, dData, int32(width), int32(height), int32(0), tex).Wait(ctx); err != nil { // warmup
		return fmt.Errorf("warmup kernel execution failed: %w", err)
	}
	if err := dev.Synchronize(ctx); err != nil {
		return err
	}

	start := time.Now()
	launches := make([]*streams.Future, layers)
	for layer := range launches {
		launches[layer] = s.Launch(ctx, k, cfg, dData, int32(width), int32(height), int32(layer), tex)
	}
	if err := dev.Synchronize(ctx); err != nil {
		return fmt.Errorf("kernel execution failed: %w", err)
	}
	ms := float64(time.Since(start).Nanoseconds()) / 1e6
	fmt.Printf("Processing time: %.3f msec\n", ms)
	fmt.Printf("%.2f Mtexlookups/sec\n", float64(n)/(ms/1000)/1e6)
	for _, f := range launches {
		if err := f.Wait(ctx); err != nil {
			return fmt.Errorf("kernel execution failed: %w", err)
		}
	}

	out := make([]float32, n)
	if err := streams.CopyFromDevice(ctx, s, out, dData).Wait(ctx); err != nil {
		return err
	}
	fmt.Println("Comparing kernel output to expected data")
	if bad := compareData(out, ref, minEpsilonError); bad >= 0 {
		return fmt.Errorf("element %d is %g, expected %g", bad, out[bad], ref[bad])
	}
	return nil
}

// compareData is helper_image.h's compareData with no threshold: the index of the first
// element more than eps from its reference, or -1.
func compareData(data, ref []float32, eps float32) int {
	for i := range ref {
		if d := ref[i] - data[i]; d > eps || d < -eps {
			return i
		}
	}
	return -1
}
