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
extern "C" __global__ void fetch_f1(cudaTextureObject_t t, int n, float* out) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) out[i] = tex1Dfetch<float>(t, i - 2);
}
`

// samplingSim are the kernels' Go twins for the simulator.
var samplingSim = map[string]cuda.SimKernel{
	"sample_f1": func(c *cuda.KernelCall) error { return sampleInto[float32](c) },
	"sample_f4": func(c *cuda.KernelCall) error { return sampleInto[[4]float32](c) },
	"sample_u4": func(c *cuda.KernelCall) error { return sampleInto[[4]uint8](c) },
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
