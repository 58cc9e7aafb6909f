//go:build linux

package interop_test

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/core"
	"github.com/gpuactor/gpuactor/internal/egl"
	"github.com/gpuactor/gpuactor/internal/sim"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/internal/testgpu"
	"github.com/gpuactor/gpuactor/interop"
	"github.com/gpuactor/gpuactor/streams"
	"github.com/gpuactor/gpuactor/textures"
)

// The graphics GPU tests need headless EGL on the GPU (interop/testdata/run-gl.sh carries the
// loaders there); without it they skip, and fail under GPUACTOR_REQUIRE_GPU=1.

const graphicsKernels = `
extern "C" __global__ void fill_u32(unsigned int* p, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) p[i] = 3u * (unsigned int)i + 1u;
}
extern "C" __global__ void add_u32(unsigned int* p, unsigned int v, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) p[i] += v;
}
extern "C" __global__ void surf_fill(cudaSurfaceObject_t s, int w, int h) {
	int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
	if (x < w && y < h) surf2Dwrite(0.5f * (float)(y * w + x) - 7.0f, s, x * 4, y);
}
`

// glGPU is a GPU device with an EGL context on the same GPU attached.
type glGPU struct {
	dev     *device.Device
	c       *egl.Context
	gl      *interop.GL
	s       *streams.Stream
	kernels *device.Module
}

func openGLGPU(t *testing.T, ctx context.Context) *glGPU {
	t.Helper()
	testgpu.Need(t, testdev.GPU(), "the cuda backend sees no device")
	dev := testdev.Open(t, ctx, []device.Option{device.WithBackend(device.BackendCUDA), device.WithKernelCache(t.TempDir())})
	c, err := egl.Open(egl.ForCUDADevice(dev.Ordinal()))
	if err != nil {
		var ue *egl.UnavailableError
		require.ErrorAs(t, err, &ue)
		testgpu.Need(t, false, "no headless EGL on the GPU (run interop/testdata/run-gl.sh): "+err.Error())
	}
	t.Cleanup(c.Close) // after the Detach below: cleanups run last first
	gl, err := interop.AttachGL(ctx, dev, c)
	require.NoError(t, err)
	t.Cleanup(func() {
		if err := gl.Detach(context.Background()); err != nil && !errors.Is(err, core.ErrClosed) {
			t.Errorf("Detach: %v", err)
		}
	})
	s, err := streams.New(ctx, dev)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close(context.Background())) })
	mod, err := dev.Compile(ctx, device.Source{Name: "graphics_test.cu", Code: graphicsKernels})
	require.NoError(t, err)
	var version string
	require.NoError(t, gl.Run(ctx, func() error {
		g, err := c.GL()
		if err == nil {
			version = g.Version()
		}
		return err
	}))
	t.Logf("EGL %s (%s), GL %s, CUDA device %d", c.Vendor, c.Library, version, c.Device)
	return &glGPU{dev: dev, c: c, gl: gl, s: s, kernels: mod}
}

// run runs fn with the context's GL functions on the device's thread.
func (f *glGPU) run(t *testing.T, ctx context.Context, fn func(g *egl.GL) error) {
	t.Helper()
	require.NoError(t, f.gl.Run(ctx, func() error {
		g, err := f.c.GL()
		if err != nil {
			return err
		}
		return fn(g)
	}))
}

func (f *glGPU) kernel(t *testing.T, ctx context.Context, name string) *device.Kernel {
	t.Helper()
	k, err := f.kernels.Kernel(ctx, name)
	require.NoError(t, err)
	return k
}

func u32Bytes(v []uint32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], x)
	}
	return b
}

func bytesU32(b []byte) []uint32 {
	v := make([]uint32, len(b)/4)
	for i := range v {
		v[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return v
}

// A GL buffer written by a CUDA kernel is read back by glGetBufferSubData, every value
// checked; then GL writes it, CUDA reads and adds to it, and GL reads the sum.
func TestGPUGLBufferRoundTrip(t *testing.T) {
	ctx := testdev.Ctx(t)
	f := openGLGPU(t, ctx)
	const n = 4096
	var buf uint32
	f.run(t, ctx, func(g *egl.GL) (err error) {
		buf, err = g.NewBuffer(make([]byte, 4*n))
		return err
	})
	defer f.run(t, ctx, func(g *egl.GL) error { return g.DeleteBuffer(buf) })

	devs, err := f.gl.GLDevices(ctx)
	require.NoError(t, err)
	assert.Contains(t, devs, f.dev.Ordinal(), "cudaGLGetDevices names the device the context renders on")

	r, err := interop.RegisterGLBuffer(ctx, f.gl, buf)
	require.NoError(t, err)
	m, err := interop.MapResources(ctx, f.s, r)
	require.NoError(t, err)
	b, err := r.Buffer(ctx)
	require.NoError(t, err)
	require.EqualValues(t, 4*n, b.Size())
	require.NoError(t, f.s.Launch(ctx, f.kernel(t, ctx, "fill_u32"), cuda.LaunchConfig{Grid: cuda.Dim(n / 256), Block: cuda.Dim(256)}, b, int32(n)).Wait(ctx))
	require.NoError(t, m.Unmap(ctx, f.s).Wait(ctx))

	want := make([]uint32, n)
	for i := range want {
		want[i] = 3*uint32(i) + 1
	}
	got := make([]byte, 4*n)
	f.run(t, ctx, func(g *egl.GL) error { return g.GetBufferSubData(buf, 0, got) })
	require.Equal(t, want, bytesU32(got), "what the kernel wrote, read by GL")

	// The reverse: GL writes, CUDA reads, adds 1000, GL reads.
	for i := range want {
		want[i] = uint32(i*i) ^ 0x5a5a
	}
	f.run(t, ctx, func(g *egl.GL) error { return g.BufferSubData(buf, 0, u32Bytes(want)) })
	require.NoError(t, r.SetMapFlags(ctx, interop.MapReadWrite))
	m, err = interop.MapResources(ctx, f.s, r)
	require.NoError(t, err)
	b, err = r.Buffer(ctx)
	require.NoError(t, err)
	host := make([]uint32, n)
	require.NoError(t, streams.CopyFromDevice(ctx, f.s, host, b).Wait(ctx))
	require.Equal(t, want, host, "what GL wrote, read by CUDA")
	require.NoError(t, f.s.Launch(ctx, f.kernel(t, ctx, "add_u32"), cuda.LaunchConfig{Grid: cuda.Dim(n / 256), Block: cuda.Dim(256)}, b, uint32(1000), int32(n)).Wait(ctx))
	require.NoError(t, m.Unmap(ctx, f.s).Wait(ctx))
	f.run(t, ctx, func(g *egl.GL) error { return g.GetBufferSubData(buf, 0, got) })
	for i := range want {
		want[i] += 1000
	}
	require.Equal(t, want, bytesU32(got))
	require.NoError(t, r.Close(ctx))
}

// A GL texture mapped as an array is written by CUDA (an RGBA8 one by an array copy, an R32F
// one by a kernel through a surface), drawn into a framebuffer by GL and read back with
// glReadPixels, every value checked; and a texture GL wrote is read by CUDA.
func TestGPUGLTextureRoundTrip(t *testing.T) {
	ctx := testdev.Ctx(t)
	f := openGLGPU(t, ctx)
	const w, h = 64, 32
	var rgba, r32 uint32
	f.run(t, ctx, func(g *egl.GL) (err error) {
		if rgba, err = g.NewTexture2D(egl.RGBA8, w, h); err != nil {
			return err
		}
		r32, err = g.NewTexture2D(egl.R32F, w, h)
		return err
	})
	defer f.run(t, ctx, func(g *egl.GL) error { return errors.Join(g.DeleteTexture(rgba), g.DeleteTexture(r32)) })

	rr, err := interop.RegisterGLImage(ctx, f.gl, rgba, interop.GLTexture2D, interop.RegisterWriteDiscard)
	require.NoError(t, err)
	rf, err := interop.RegisterGLImage(ctx, f.gl, r32, interop.GLTexture2D, interop.RegisterSurfaceLoadStore)
	require.NoError(t, err)
	m, err := interop.MapResources(ctx, f.s, rr, rf)
	require.NoError(t, err)
	ar, err := rr.Array(ctx, 0, 0)
	require.NoError(t, err)
	assert.Equal(t, alloc.Extent{W: w, H: h}, ar.Extent())
	pix := make([]uint8, 4*w*h)
	for i := range pix {
		pix[i] = uint8(i*31 + i/7)
	}
	require.NoError(t, alloc.CopyToArray(ctx, f.s, ar, ar.Whole(), pix).Wait(ctx))
	af, err := rf.Array(ctx, 0, 0)
	require.NoError(t, err)
	surf, err := textures.NewSurface(ctx, f.dev, textures.FromArray(af))
	require.NoError(t, err)
	require.NoError(t, f.s.Launch(ctx, f.kernel(t, ctx, "surf_fill"), cuda.LaunchConfig{Grid: cuda.Dim3{X: w / 16, Y: h / 16, Z: 1}, Block: cuda.Dim3{X: 16, Y: 16, Z: 1}}, surf.Object(), int32(w), int32(h)).Wait(ctx))
	require.NoError(t, surf.Close(ctx))
	require.NoError(t, m.Unmap(ctx, f.s).Wait(ctx))
	require.ErrorIs(t, alloc.CopyToArray(ctx, f.s, ar, ar.Whole(), pix).Wait(ctx), core.ErrClosed, "the array after Unmap")

	got := make([]byte, 4*w*h)
	f.run(t, ctx, func(g *egl.GL) error { return g.DrawAndRead(rgba, egl.RGBA8, w, h, egl.RGBA, egl.UnsignedByte, got) })
	require.Equal(t, pix, got, "the RGBA8 texture CUDA wrote, drawn and read by GL")
	f.run(t, ctx, func(g *egl.GL) error { return g.DrawAndRead(r32, egl.R32F, w, h, egl.Red, egl.Float, got) })
	for i := range w * h {
		want := 0.5*float32(i) - 7
		require.Equal(t, want, math.Float32frombits(binary.LittleEndian.Uint32(got[4*i:])), "texel %d of the R32F texture the kernel wrote", i)
	}

	// The reverse: GL writes the R32F texture, CUDA reads it.
	vals := make([]float32, w*h)
	raw := make([]byte, 4*w*h)
	for i := range vals {
		vals[i] = float32(i)*0.25 + 1
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(vals[i]))
	}
	f.run(t, ctx, func(g *egl.GL) error { return g.TexSubImage2D(r32, w, h, egl.Red, egl.Float, raw) })
	require.NoError(t, rf.SetMapFlags(ctx, interop.MapReadOnly))
	m, err = interop.MapResources(ctx, f.s, rf)
	require.NoError(t, err)
	af, err = rf.Array(ctx, 0, 0)
	require.NoError(t, err)
	out := make([]float32, w*h)
	require.NoError(t, alloc.CopyFromArray(ctx, f.s, out, af, af.Whole()).Wait(ctx))
	require.Equal(t, vals, out, "what GL wrote, read by CUDA")
	mip, err := rf.MipmappedArray(ctx, 1)
	require.NoError(t, err)
	assert.Equal(t, alloc.Extent{W: w, H: h}, mip.Extent())
	require.NoError(t, m.Unmap(ctx, f.s).Wait(ctx))
	require.NoError(t, rr.Close(ctx))
	require.NoError(t, rf.Close(ctx))
}

// An EGL fence sync after GL work, imported as an event, orders a stream's copy after the GL
// write: the copy sees what GL wrote.
func TestGPUEventFromEGLSync(t *testing.T) {
	ctx := testdev.Ctx(t)
	f := openGLGPU(t, ctx)
	if !f.c.HasExtension("EGL_KHR_fence_sync") {
		t.Skip("the EGL display has no EGL_KHR_fence_sync")
	}
	const n = 1 << 16
	var buf uint32
	f.run(t, ctx, func(g *egl.GL) (err error) {
		buf, err = g.NewBuffer(make([]byte, 4*n))
		return err
	})
	defer f.run(t, ctx, func(g *egl.GL) error { return g.DeleteBuffer(buf) })
	r, err := interop.RegisterGLBuffer(ctx, f.gl, buf, interop.RegisterReadOnly)
	require.NoError(t, err)
	defer func() { require.NoError(t, r.Close(ctx)) }()

	want := testdev.Filled(n, 0xc0ffee)
	var sync uintptr
	f.run(t, ctx, func(g *egl.GL) (err error) {
		if err = g.BufferSubData(buf, 0, u32Bytes(want)); err != nil {
			return err
		}
		sync, err = f.c.FenceSync()
		return err
	})
	defer f.run(t, ctx, func(*egl.GL) error { return f.c.DestroySync(sync) })
	ev, err := interop.EventFromEGLSync(ctx, f.dev, sync)
	if errors.Is(err, interop.ErrGraphicsNotSupported) {
		t.Skipf("the driver makes no events of EGL syncs on this platform: %v", err)
	}
	require.NoError(t, err)
	require.NoError(t, f.s.Wait(ctx, ev).Wait(ctx))
	m, err := interop.MapResources(ctx, f.s, r)
	require.NoError(t, err)
	b, err := r.Buffer(ctx)
	require.NoError(t, err)
	got := make([]uint32, n)
	require.NoError(t, streams.CopyFromDevice(ctx, f.s, got, b).Wait(ctx))
	require.Equal(t, want, got)
	require.NoError(t, m.Unmap(ctx, f.s).Wait(ctx))
	require.NoError(t, ev.Close(ctx))
}

// Mistakes with graphics resources are clear errors, and the device stays usable: a GL name
// the context does not know, a closed resource, uses of an unmapped one, a double map and
// unmap, a stream of another device.
func TestGPUGraphicsMistakes(t *testing.T) {
	ctx := testdev.Ctx(t)
	f := openGLGPU(t, ctx)
	_, err := interop.RegisterGLBuffer(ctx, f.gl, 0xfffff)
	require.Error(t, err)
	t.Logf("an unknown GL buffer: %v", err)
	testdev.RequireUsable(t, f.dev)

	var buf uint32
	f.run(t, ctx, func(g *egl.GL) (err error) {
		buf, err = g.NewBuffer(make([]byte, 256))
		return err
	})
	defer f.run(t, ctx, func(g *egl.GL) error { return g.DeleteBuffer(buf) })
	r, err := interop.RegisterGLBuffer(ctx, f.gl, buf)
	require.NoError(t, err)
	_, err = r.Buffer(ctx)
	require.ErrorIs(t, err, interop.ErrNotMapped)
	m, err := interop.MapResources(ctx, f.s, r)
	require.NoError(t, err)
	_, err = interop.MapResources(ctx, f.s, r)
	require.ErrorIs(t, err, interop.ErrAlreadyMapped)
	require.ErrorIs(t, r.Close(ctx), interop.ErrAlreadyMapped)
	_, err = r.Array(ctx, 0, 0)
	require.ErrorIs(t, err, core.ErrInvalidArgument)

	other := testdev.OpenOn(t, ctx, sim.New())
	os, err := streams.New(ctx, other)
	require.NoError(t, err)
	require.ErrorIs(t, m.Unmap(ctx, os).Wait(ctx), core.ErrWrongDevice)
	require.NoError(t, m.Unmap(ctx, f.s).Wait(ctx))
	require.ErrorIs(t, m.Unmap(ctx, f.s).Wait(ctx), interop.ErrNotMapped)
	require.NoError(t, r.Close(ctx))
	_, err = interop.MapResources(ctx, f.s, r)
	require.ErrorIs(t, err, core.ErrClosed)
	require.ErrorIs(t, r.Close(ctx), core.ErrClosed)
	testdev.RequireUsable(t, f.dev)

	// A resource left mapped and registered is unmapped and unregistered by Detach.
	r2, err := interop.RegisterGLBuffer(ctx, f.gl, buf)
	require.NoError(t, err)
	_, err = interop.MapResources(ctx, f.s, r2)
	require.NoError(t, err)
	require.NoError(t, f.gl.Detach(ctx))
	require.ErrorIs(t, r2.Close(ctx), core.ErrClosed)
	testdev.RequireUsable(t, f.dev)
	// The texture and buffer deletes after Detach need the context: attach it again.
	f.gl, err = interop.AttachGL(ctx, f.dev, f.c)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, f.gl.Detach(context.Background())) }) // before the context's Close
}
