// Command glinterop is compute-then-render on a headless GPU: a CUDA kernel writes a GL buffer
// and a GL texture (an RGBA8 image, through a surface) that gpuactor registered and mapped,
// then OpenGL reads them back (glGetBufferSubData, and the texture drawn into a framebuffer
// read with glReadPixels) and every value is checked. It prints PASS or FAIL.
//
// It needs an NVIDIA GPU and headless OpenGL through EGL (glvnd's libEGL.so.1 and NVIDIA's
// EGL vendor library: interop/testdata/run-gl.sh carries the loaders to a host without
// them). The simulator has no OpenGL, so where there is no GPU or no EGL it says why and exits
// 0 (1 with -require, as on the GPU host):
//
//	go run ./examples/glinterop            # on a GPU host with EGL
//	go run ./examples/glinterop -require   # a missing GPU or EGL is a failure
//
// The GL context is attached to the device (interop.AttachGL): the device makes it current on
// its own thread, where every CUDA call of the device runs, and the program's GL code runs
// there too, through GL.Run.
package main

import (
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/egl"
	"github.com/gpuactor/gpuactor/interop"
	"github.com/gpuactor/gpuactor/streams"
	"github.com/gpuactor/gpuactor/textures"
)

const (
	n    = 1 << 16 // the buffer's floats
	w, h = 256, 128
)

const source = `
extern "C" __global__ void wave(float* p, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) p[i] = 0.25f * (float)(i % 1024) - 3.0f;
}
extern "C" __global__ void gradient(cudaSurfaceObject_t s, int w, int h) {
	int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
	// One RGBA8 texel as a 32-bit word: R, G, B, A from the low byte up.
	if (x < w && y < h) surf2Dwrite((unsigned int)(x & 255) | (unsigned int)(y & 255) << 8 | (unsigned int)((x + y) & 255) << 16 | 255u << 24, s, x * 4, y);
}
`

func main() {
	require := flag.Bool("require", false, "exit 1 where no GPU or no EGL is found, instead of 0")
	flag.Parse()
	err := run(context.Background())
	var na notAvailable
	switch {
	case errors.As(err, &na) && !*require:
		fmt.Printf("glinterop: cannot run here: %v\n", err)
	case err != nil:
		fmt.Printf("glinterop: %v\nFAIL\n", err)
		os.Exit(1)
	default:
		fmt.Println("PASS")
	}
}

// notAvailable is a missing GPU or EGL: the example cannot run, which is no failure of it.
type notAvailable struct{ error }

func run(ctx context.Context) (err error) {
	dev, err := device.Open(ctx, 0, device.WithBackend(device.BackendCUDA))
	if err != nil {
		return notAvailable{fmt.Errorf("no CUDA device (the simulator has no OpenGL): %w", err)}
	}
	defer func() { err = errors.Join(err, dev.Close()) }()
	c, err := egl.Open(egl.ForCUDADevice(dev.Ordinal()))
	if err != nil {
		return notAvailable{err}
	}
	defer c.Close()
	gl, err := interop.AttachGL(ctx, dev, c)
	if err != nil {
		return err
	}
	defer func() {
		if derr := gl.Detach(ctx); derr != nil {
			err = errors.Join(err, derr)
		}
	}()
	s, err := streams.New(ctx, dev)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, s.Close(ctx)) }()

	// GL makes a buffer and a texture, on the device's thread.
	var buf, tex uint32
	var version string
	if err := gl.Run(ctx, func() error {
		g, err := c.GL()
		if err != nil {
			return err
		}
		version = g.Version()
		if buf, err = g.NewBuffer(make([]byte, 4*n)); err != nil {
			return err
		}
		tex, err = g.NewTexture2D(egl.RGBA8, w, h)
		return err
	}); err != nil {
		return err
	}
	fmt.Printf("%s, EGL by %s\n", version, c.Vendor)

	// CUDA writes them.
	rb, err := interop.RegisterGLBuffer(ctx, gl, buf, interop.RegisterWriteDiscard)
	if err != nil {
		return err
	}
	rt, err := interop.RegisterGLImage(ctx, gl, tex, interop.GLTexture2D, interop.RegisterSurfaceLoadStore, interop.RegisterWriteDiscard)
	if err != nil {
		return err
	}
	mod, err := dev.Compile(ctx, device.Source{Name: "glinterop.cu", Code: source})
	if err != nil {
		return err
	}
	wave, err := mod.Kernel(ctx, "wave")
	if err != nil {
		return err
	}
	gradient, err := mod.Kernel(ctx, "gradient")
	if err != nil {
		return err
	}
	m, err := interop.MapResources(ctx, s, rb, rt)
	if err != nil {
		return err
	}
	b, err := rb.Buffer(ctx)
	if err != nil {
		return err
	}
	arr, err := rt.Array(ctx, 0, 0)
	if err != nil {
		return err
	}
	surf, err := textures.NewSurface(ctx, dev, textures.FromArray(arr))
	if err != nil {
		return err
	}
	waved := s.Launch(ctx, wave, cuda.LaunchConfig{Grid: cuda.Dim(n / 256), Block: cuda.Dim(256)}, b, int32(n))
	drawn := s.Launch(ctx, gradient, cuda.LaunchConfig{Grid: cuda.Dim3{X: w / 16, Y: h / 16, Z: 1}, Block: cuda.Dim3{X: 16, Y: 16, Z: 1}}, surf.Object(), int32(w), int32(h))
	if err := errors.Join(waved.Wait(ctx), drawn.Wait(ctx), m.Unmap(ctx, s).Wait(ctx)); err != nil {
		return err
	}
	if err := surf.Close(ctx); err != nil {
		return err
	}
	fmt.Printf("CUDA wrote %d floats into GL buffer %d and %d×%d texels into GL texture %d (array %v)\n", n, buf, w, h, tex, arr.Extent())

	// GL reads them back.
	gotBuf := make([]byte, 4*n)
	gotTex := make([]byte, 4*w*h)
	if err := gl.Run(ctx, func() error {
		g, err := c.GL()
		if err != nil {
			return err
		}
		if err := g.GetBufferSubData(buf, 0, gotBuf); err != nil {
			return err
		}
		return g.DrawAndRead(tex, egl.RGBA8, w, h, egl.RGBA, egl.UnsignedByte, gotTex)
	}); err != nil {
		return err
	}
	bad := 0
	for i := range n {
		want := 0.25*float32(i%1024) - 3
		if got := math.Float32frombits(binary.LittleEndian.Uint32(gotBuf[4*i:])); got != want {
			if bad++; bad <= 5 {
				fmt.Printf("buffer[%d] = %v, want %v\n", i, got, want)
			}
		}
	}
	for y := range h {
		for x := range w {
			want := [4]byte{byte(x), byte(y), byte((x + y) & 255), 255}
			if got := [4]byte(gotTex[4*(y*w+x):]); got != want {
				if bad++; bad <= 10 {
					fmt.Printf("texel (%d, %d) = %v, want %v\n", x, y, got, want)
				}
			}
		}
	}
	fmt.Printf("GL read back %d floats and %d texels: %d wrong\n", n, w*h, bad)
	if err := errors.Join(rb.Close(ctx), rt.Close(ctx), gl.Run(ctx, func() error {
		g, err := c.GL()
		if err != nil {
			return err
		}
		return errors.Join(g.DeleteBuffer(buf), g.DeleteTexture(tex))
	})); err != nil {
		return err
	}
	if bad != 0 {
		return fmt.Errorf("%d values wrong", bad)
	}
	return nil
}
