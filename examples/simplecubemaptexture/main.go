// Command simplecubemaptexture is NVIDIA's simpleCubemapTexture sample (cuda-samples,
// 0_Introduction) done with gpuactor: a cubemap texture of 6 faces of 64×64 floats (texel i of
// the cubemap holds i) is read back by one kernel through texCubemap, each thread reading its
// texel of every face by a direction at the texel's centre, with normalized coordinates,
// linear filtering and wrap addressing, and writing it negated. The host checks every output
// against that within 5e-3, as the C sample's compareData does, and times the launch. It prints
// the C sample's lines, then PASS or FAIL (the C sample says which only with its exit status).
//
//	go run ./examples/simplecubemaptexture
//	go run ./examples/simplecubemaptexture -backend sim
//
// Differences from the C sample, and why:
//
//   - The copy into the array. The C sample copies the host data with one synchronous
//     cudaMemcpy3D; the port copies it with alloc.CopyToArray on the device's own stream
//     (through pinned staging) and waits for it.
//   - The launches. The C sample launches on the legacy default stream and waits with
//     cudaDeviceSynchronize; gpuactor never queues work on stream 0: the port launches on the
//     device's own stream and waits with Device.Synchronize. Both time the launch and that
//     wait.
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

// minEpsilonError is the C sample's MIN_EPSILON_ERROR.
const minEpsilonError = 5e-3

// source is simpleCubemapTexture's kernel.
const source = `
extern "C" __global__ void transformKernel(float* g_odata, int width, cudaTextureObject_t tex) {
    unsigned int x = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int y = blockIdx.y * blockDim.y + threadIdx.y;
    // 0.5f offset and division are necessary to access the original data points
    // in the texture (such that bilinear interpolation will not be activated).
    float u = ((x + 0.5f) / (float)width) * 2.f - 1.f;
    float v = ((y + 0.5f) / (float)width) * 2.f - 1.f;
    float cx, cy, cz;
    for (unsigned int face = 0; face < 6; face++) {
        if (face == 0) { cx = 1; cy = -v; cz = -u; }        // positive X
        else if (face == 1) { cx = -1; cy = -v; cz = u; }   // negative X
        else if (face == 2) { cx = u; cy = 1; cz = v; }     // positive Y
        else if (face == 3) { cx = u; cy = -1; cz = -v; }   // negative Y
        else if (face == 4) { cx = u; cy = -v; cz = 1; }    // positive Z
        else if (face == 5) { cx = -u; cy = -v; cz = -1; }  // negative Z
        g_odata[face * width * width + y * width + x] = -texCubemap<float>(tex, cx, cy, cz);
    }
}
`

// direction is the kernel's direction for face at (u, v).
func direction(face int, u, v float32) (cx, cy, cz float32) {
	switch face {
	case 0:
		return 1, -v, -u
	case 1:
		return -1, -v, u
	case 2:
		return u, 1, v
	case 3:
		return u, -1, -v
	case 4:
		return u, -v, 1
	}
	return -u, -v, -1
}

// simKernels is transformKernel for the simulator: every thread of the grid, in turn.
var simKernels = map[string]cuda.SimKernel{
	"transformKernel": func(c *cuda.KernelCall) error {
		width := int(c.Int32(1))
		tex := c.TextureArg(2)
		out := cuda.SimSlice[float32](c, 0, 6*width*width)
		nx, ny := int(c.Grid.X*c.Block.X), int(c.Grid.Y*c.Block.Y)
		for y := 0; y < ny; y++ {
			for x := 0; x < nx; x++ {
				u := ((float32(x)+0.5)/float32(width))*2 - 1
				v := ((float32(y)+0.5)/float32(width))*2 - 1
				for face := 0; face < 6; face++ {
					cx, cy, cz := direction(face, u, v)
					out[face*width*width+y*width+x] = -cuda.SimTexCubemap[float32](c, tex, cx, cy, cz)
				}
			}
		}
		return nil
	},
}

type config struct {
	width int
	sample.Flags
	opts []device.Option // more device options (tests)
}

func main() {
	c := config{width: 64}
	c.Register()
	flag.Parse()
	sample.Finish(run(c))
}

func run(c config) (err error) {
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

	width, faces, layers := c.width, 6, 1
	cubemapSize := width * width * faces
	n := cubemapSize * layers
	hData := make([]float32, n)
	for i := range hData {
		hData[i] = float32(i)
	}
	ref := make([]float32, n)
	for layer := 0; layer < layers; layer++ {
		for i := 0; i < cubemapSize; i++ {
			ref[layer*cubemapSize+i] = -hData[layer*cubemapSize+i] + float32(layer)
		}
	}

	mod, err := dev.Compile(ctx, device.Source{Name: "simpleCubemapTexture.cu", Code: source, Sim: simKernels})
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
	arr, err := alloc.NewArray(ctx, dev, cuda.Channels[float32](1), alloc.Extent{W: width, H: width, D: faces}, alloc.Cubemap())
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
		Address:    [3]textures.AddressMode{textures.Wrap, textures.Wrap, textures.Wrap},
		Read:       textures.ElementType,
	})
	if err != nil {
		return err
	}
	defer sample.Keep(&err, func() error { return tex.Close(ctx) })

	block := cuda.Dim(8, 8, 1)
	grid := cuda.Dim(uint32(width)/block.X, uint32(width)/block.Y, 1)
	fmt.Printf("Covering Cubemap data array of %d~3 x %d: Grid size is %d x %d, each block has 8 x 8 threads\n", width, layers, grid.X, grid.Y)
	cfg := cuda.LaunchConfig{Grid: grid, Block: block}
	if err := s.Launch(ctx, k, cfg, dData, int32(width), tex).Wait(ctx); err != nil { // warmup
		return fmt.Errorf("warmup kernel execution failed: %w", err)
	}
	if err := dev.Synchronize(ctx); err != nil {
		return err
	}

	start := time.Now()
	launch := s.Launch(ctx, k, cfg, dData, int32(width), tex)
	if err := dev.Synchronize(ctx); err != nil {
		return fmt.Errorf("kernel execution failed: %w", err)
	}
	ms := float64(time.Since(start).Nanoseconds()) / 1e6
	fmt.Printf("Processing time: %.3f msec\n", ms)
	fmt.Printf("%.2f Mtexlookups/sec\n", float64(cubemapSize)/(ms/1000)/1e6)
	if err := launch.Wait(ctx); err != nil {
		return fmt.Errorf("kernel execution failed: %w", err)
	}

	out := make([]float32, n)
	if err := streams.CopyFromDevice(ctx, s, out, dData).Wait(ctx); err != nil {
		return err
	}
	fmt.Println("Comparing kernel output to expected data")
	if bad := compareData(out[:cubemapSize], ref[:cubemapSize], minEpsilonError); bad >= 0 {
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
