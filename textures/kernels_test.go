package textures_test

import "github.com/gpuactor/gpuactor/cuda"

// samplingSource is the CUDA side of the sampling comparison: each kernel fetches texture t
// at the n coordinate pairs xy (or indices) and writes what it got.
const samplingSource = `
extern "C" __global__ void sample_f1(cudaTextureObject_t t, int n, const float* xy, float* out) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) out[i] = tex2D<float>(t, xy[2 * i], xy[2 * i + 1]);
}
extern "C" __global__ void sample_f4(cudaTextureObject_t t, int n, const float* xy, float4* out) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) out[i] = tex2D<float4>(t, xy[2 * i], xy[2 * i + 1]);
}
extern "C" __global__ void sample_u4(cudaTextureObject_t t, int n, const float* xy, uchar4* out) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) out[i] = tex2D<uchar4>(t, xy[2 * i], xy[2 * i + 1]);
}
extern "C" __global__ void sample_layered_u1(cudaTextureObject_t t, int n, const float* xyl, unsigned int* out) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) out[i] = tex2DLayered<unsigned int>(t, xyl[3 * i], xyl[3 * i + 1], (int)xyl[3 * i + 2]);
}
extern "C" __global__ void sample_3d(cudaTextureObject_t t, int n, const float* xyz, float* out) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) out[i] = tex3D<float>(t, xyz[3 * i], xyz[3 * i + 1], xyz[3 * i + 2]);
}
extern "C" __global__ void sample_lod(cudaTextureObject_t t, int n, const float* xyl, float* out) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) out[i] = tex2DLod<float>(t, xyl[3 * i], xyl[3 * i + 1], xyl[3 * i + 2]);
}
extern "C" __global__ void fetch_f1(cudaTextureObject_t t, int n, float* out) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) out[i] = tex1Dfetch<float>(t, i - 2);
}
extern "C" __global__ void surf_fill(cudaSurfaceObject_t s, int w, int h) {
	int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
	if (x < w && y < h) surf2Dwrite((float)(x + 100 * y), s, x * 4, y);
}
extern "C" __global__ void transform_layered(float* out, int width, int height, int layer, cudaTextureObject_t tex) {
	unsigned int x = blockIdx.x * blockDim.x + threadIdx.x;
	unsigned int y = blockIdx.y * blockDim.y + threadIdx.y;
	float u = (x + 0.5f) / (float)width;
	float v = (y + 0.5f) / (float)height;
	out[layer * width * height + y * width + x] = -tex2DLayered<float>(tex, u, v, layer) + layer;
}
`

// samplingSim are the kernels' Go twins for the simulator.
var samplingSim = map[string]cuda.SimKernel{
	"sample_f1": func(c *cuda.KernelCall) error { return sampleInto[float32](c) },
	"sample_f4": func(c *cuda.KernelCall) error { return sampleInto[[4]float32](c) },
	"sample_u4": func(c *cuda.KernelCall) error { return sampleInto[[4]uint8](c) },
	"sample_layered_u1": func(c *cuda.KernelCall) error {
		t, n := c.TextureArg(0), int(c.Int32(1))
		xyl := cuda.SimSlice[float32](c, 2, 3*n)
		out := cuda.SimSlice[uint32](c, 3, n)
		for i := range out {
			out[i] = cuda.SimTex2DLayered[uint32](c, t, xyl[3*i], xyl[3*i+1], int32(xyl[3*i+2]))
		}
		return nil
	},
	"sample_3d": func(c *cuda.KernelCall) error {
		t, n := c.TextureArg(0), int(c.Int32(1))
		xyz := cuda.SimSlice[float32](c, 2, 3*n)
		out := cuda.SimSlice[float32](c, 3, n)
		for i := range out {
			out[i] = cuda.SimTex3D[float32](c, t, xyz[3*i], xyz[3*i+1], xyz[3*i+2])
		}
		return nil
	},
	"sample_lod": func(c *cuda.KernelCall) error {
		t, n := c.TextureArg(0), int(c.Int32(1))
		xyl := cuda.SimSlice[float32](c, 2, 3*n)
		out := cuda.SimSlice[float32](c, 3, n)
		for i := range out {
			out[i] = cuda.SimTex2DLod[float32](c, t, xyl[3*i], xyl[3*i+1], xyl[3*i+2])
		}
		return nil
	},
	"surf_fill": func(c *cuda.KernelCall) error {
		s, w, h := c.SurfaceArg(0), c.Int32(1), c.Int32(2)
		for y := int32(0); y < h && y < int32(c.Grid.Y*c.Block.Y); y++ {
			for x := int32(0); x < w && x < int32(c.Grid.X*c.Block.X); x++ {
				cuda.SimSurf2DWrite(c, s, float32(x+100*y), x*4, y, cuda.BoundaryTrap)
			}
		}
		return nil
	},
	"transform_layered": func(c *cuda.KernelCall) error {
		w, h, layer, t := c.Int32(1), c.Int32(2), c.Int32(3), c.TextureArg(4)
		out := cuda.SimSlice[float32](c, 0, int(w*h*(layer+1)))
		for y := int32(0); y < int32(c.Grid.Y*c.Block.Y); y++ {
			for x := int32(0); x < int32(c.Grid.X*c.Block.X); x++ {
				u, v := (float32(x)+0.5)/float32(w), (float32(y)+0.5)/float32(h)
				out[layer*w*h+y*w+x] = -cuda.SimTex2DLayered[float32](c, t, u, v, layer) + float32(layer)
			}
		}
		return nil
	},
	"fetch_f1": func(c *cuda.KernelCall) error {
		n := int(c.Int32(1))
		out := cuda.SimSlice[float32](c, 2, n)
		for i := range out {
			out[i] = cuda.SimTex1Dfetch[float32](c, c.TextureArg(0), int32(i-2))
		}
		return nil
	},
}

func sampleInto[T cuda.SimTexel](c *cuda.KernelCall) error {
	t, n := c.TextureArg(0), int(c.Int32(1))
	xy := cuda.SimSlice[float32](c, 2, 2*n)
	out := cuda.SimSlice[T](c, 3, n)
	for i := range out {
		out[i] = cuda.SimTex2D[T](c, t, xy[2*i], xy[2*i+1])
	}
	return nil
}
