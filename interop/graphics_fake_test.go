//go:build linux

package interop_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
	"github.com/gpuactor/gpuactor/internal/sim"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/interop"
	"github.com/gpuactor/gpuactor/streams"
)

// glBackend is the simulator with a model of the runtime's GL interoperability: GL buffers
// are simulated device memory and GL images simulated arrays, made when registered. The
// runtime's rules, as its documentation states them, are checked as calls come: a GL call
// needs a GL context current on the calling thread; a resource is mapped at most once; its
// pointer and arrays exist only while it is mapped; unregistering happens once.
type glBackend struct {
	backend.Backend
	st *glState
}

func (b glBackend) Open(ordinal int) (backend.Device, error) {
	d, err := b.Backend.Open(ordinal)
	if err != nil {
		return nil, err
	}
	return &glDevice{Device: d, st: b.st}, nil
}

type glRes struct {
	kind   string
	ptr    backend.DevicePtr
	size   uint64
	arr    backend.Array
	mapped bool
}

type glState struct {
	mu         sync.Mutex
	next       uintptr
	current    map[int]*fakeGL // thread id → the context current on it
	res        map[backend.GraphicsResource]*glRes
	unregister int
	faults     []string
	streams    map[uintptr]*eglStreamModel // EGL streams (graphics_egl_fake_test.go)
	holdMap    chan struct{}               // when set, a map waits here once it has run
}

func newGLState() *glState {
	return &glState{next: 0x7000, current: map[int]*fakeGL{}, res: map[backend.GraphicsResource]*glRes{}}
}

func (s *glState) fault(format string, args ...any) {
	s.faults = append(s.faults, fmt.Sprintf(format, args...))
}

// fakeGL is a GL context: current on at most one thread, which the model tracks.
type fakeGL struct {
	st       *glState
	name     string
	devices  []int // the devices cudaGLGetDevices names for it; nil: device 0
	fail     error // MakeCurrent's error, when set
	makes    int
	releases int
}

func (c *fakeGL) MakeCurrent() error {
	if c.fail != nil {
		return c.fail
	}
	c.st.mu.Lock()
	defer c.st.mu.Unlock()
	tid := syscall.Gettid()
	for t, o := range c.st.current {
		if o == c && t != tid {
			c.st.fault("context %s made current on thread %d while current on %d", c.name, tid, t)
		}
	}
	c.st.current[tid] = c
	c.makes++
	return nil
}

func (c *fakeGL) ReleaseCurrent() error {
	c.st.mu.Lock()
	defer c.st.mu.Unlock()
	delete(c.st.current, syscall.Gettid())
	c.releases++
	return nil
}

type glDevice struct {
	backend.Device
	st *glState
}

// needGL is the rule of every GL call: a context current on this thread.
func (d *glDevice) needGL(op string) error {
	if d.st.current[syscall.Gettid()] == nil {
		d.st.fault("%s without a current GL context", op)
		return cudaerr.New(op, cudaerr.InvalidGraphicsContext)
	}
	return nil
}

func (d *glDevice) GLGetDevices(list uint32, max int) ([]int, error) {
	d.st.mu.Lock()
	defer d.st.mu.Unlock()
	c := d.st.current[syscall.Gettid()]
	if c == nil {
		d.st.fault("cudaGLGetDevices without a current GL context")
		return nil, cudaerr.New("cudaGLGetDevices", cudaerr.InvalidGraphicsContext)
	}
	if c.devices == nil {
		return []int{0}, nil
	}
	return c.devices, nil
}

func (d *glDevice) GraphicsGLRegisterBuffer(buffer, flags uint32) (backend.GraphicsResource, error) {
	d.st.mu.Lock()
	defer d.st.mu.Unlock()
	if err := d.needGL("cudaGraphicsGLRegisterBuffer"); err != nil {
		return 0, err
	}
	if buffer == 99 { // the model's unknown name
		return 0, cudaerr.New("cudaGraphicsGLRegisterBuffer", cudaerr.InvalidValue)
	}
	p, err := d.Device.Malloc(256)
	if err != nil {
		return 0, err
	}
	d.st.next += 0x10
	h := backend.GraphicsResource(d.st.next)
	d.st.res[h] = &glRes{kind: "buffer", ptr: p, size: 256}
	return h, nil
}

func (d *glDevice) GraphicsGLRegisterImage(image, target, flags uint32) (backend.GraphicsResource, error) {
	d.st.mu.Lock()
	defer d.st.mu.Unlock()
	if err := d.needGL("cudaGraphicsGLRegisterImage"); err != nil {
		return 0, err
	}
	a, err := d.Device.MallocArray(cuda.Channels[float32](1), 8, 4, 0)
	if err != nil {
		return 0, err
	}
	d.st.next += 0x10
	h := backend.GraphicsResource(d.st.next)
	d.st.res[h] = &glRes{kind: "image", arr: a}
	return h, nil
}

func (d *glDevice) GraphicsUnregisterResource(r backend.GraphicsResource) error {
	d.st.mu.Lock()
	defer d.st.mu.Unlock()
	if err := d.needGL("cudaGraphicsUnregisterResource"); err != nil {
		return err
	}
	x := d.st.res[r]
	if x == nil {
		d.st.fault("unregistering unknown resource %#x", r)
		return cudaerr.New("cudaGraphicsUnregisterResource", cudaerr.InvalidResourceHandle)
	}
	if x.mapped && x.kind != "egl image" { // the runtime maps an EGL image for as long as it is registered
		d.st.fault("unregistering mapped resource %#x", r)
	}
	delete(d.st.res, r)
	d.st.unregister++
	if x.arr != 0 {
		return d.Device.FreeArray(x.arr)
	}
	return d.Device.Free(x.ptr)
}

func (d *glDevice) GraphicsResourceSetMapFlags(r backend.GraphicsResource, flags uint32) error {
	d.st.mu.Lock()
	defer d.st.mu.Unlock()
	if d.st.res[r] == nil {
		return cudaerr.New("cudaGraphicsResourceSetMapFlags", cudaerr.InvalidResourceHandle)
	}
	return nil
}

func (d *glDevice) mapAll(op string, rs []backend.GraphicsResource, mapped bool) error {
	d.st.mu.Lock()
	defer d.st.mu.Unlock()
	if err := d.needGL(op); err != nil {
		return err
	}
	for _, r := range rs {
		x := d.st.res[r]
		if x == nil {
			d.st.fault("%s of unknown resource %#x", op, r)
			return cudaerr.New(op, cudaerr.InvalidResourceHandle)
		}
		if x.mapped == mapped {
			d.st.fault("%s of resource %#x, mapped: %v", op, r, x.mapped)
			return cudaerr.New(op, cudaerr.AlreadyMapped)
		}
	}
	for _, r := range rs {
		d.st.res[r].mapped = mapped
	}
	return nil
}

func (d *glDevice) GraphicsMapResources(rs []backend.GraphicsResource, _ backend.Stream) error {
	err := d.mapAll("cudaGraphicsMapResources", rs, true)
	if hold := d.st.holdMap; hold != nil {
		hold <- struct{}{} // the map has run: the test cancels its caller now
		<-hold
	}
	return err
}

// mapped reports whether the model holds resource r mapped.
func (s *glState) mapped(r backend.GraphicsResource) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.res[r] != nil && s.res[r].mapped
}

func (d *glDevice) mappedRes(op string, r backend.GraphicsResource) (*glRes, error) {
	x := d.st.res[r]
	if x == nil || !x.mapped {
		d.st.fault("%s of resource %#x, not mapped", op, r)
		return nil, cudaerr.New(op, cudaerr.NotMapped)
	}
	return x, nil
}

func (d *glDevice) GraphicsResourceMappedPointer(r backend.GraphicsResource) (backend.DevicePtr, uint64, error) {
	d.st.mu.Lock()
	defer d.st.mu.Unlock()
	x, err := d.mappedRes("cudaGraphicsResourceGetMappedPointer", r)
	if err != nil {
		return 0, 0, err
	}
	if x.kind != "buffer" {
		return 0, 0, cudaerr.New("cudaGraphicsResourceGetMappedPointer", cudaerr.NotMappedAsPointer)
	}
	return x.ptr, x.size, nil
}

func (d *glDevice) GraphicsSubResourceMappedArray(r backend.GraphicsResource, index, level uint32) (backend.Array, error) {
	d.st.mu.Lock()
	defer d.st.mu.Unlock()
	x, err := d.mappedRes("cudaGraphicsSubResourceGetMappedArray", r)
	if err != nil {
		return 0, err
	}
	if x.kind != "image" || index != 0 || level != 0 {
		return 0, cudaerr.New("cudaGraphicsSubResourceGetMappedArray", cudaerr.InvalidValue)
	}
	return x.arr, nil
}

// glFixture is a device of the model with a GL context attached.
type glFixture struct {
	st  *glState
	dev *device.Device
	c   *fakeGL
	gl  *interop.GL
	s   *streams.Stream
}

func newGLFixture(t *testing.T) *glFixture {
	t.Helper()
	ctx := testdev.Ctx(t)
	st := newGLState()
	cd, err := core.Open(ctx, glBackend{Backend: sim.New(), st: st}, core.Config{}, 0)
	require.NoError(t, err)
	f := &glFixture{st: st, dev: (*device.Device)(cd), c: &fakeGL{st: st, name: "A"}}
	f.gl, err = interop.AttachGL(ctx, f.dev, f.c)
	require.NoError(t, err)
	f.s, err = streams.New(ctx, f.dev)
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, f.s.Close(context.Background()))
		require.NoError(t, cd.Close())
		assert.Empty(t, st.res, "resources left registered after the device's Close")
		assert.Empty(t, st.faults, "the runtime's rules broken")
	})
	return f
}

// A GL buffer registered, mapped, written through its device.Buffer, read back, unmapped:
// the buffer is the GL buffer's memory, and refuses use after the unmap.
func TestGLBufferRoundTripOnTheModel(t *testing.T) {
	ctx := testdev.Ctx(t)
	f := newGLFixture(t)
	r, err := interop.RegisterGLBuffer(ctx, f.gl, 5, interop.RegisterWriteDiscard)
	require.NoError(t, err)
	assert.Equal(t, "GL buffer 5", fmt.Sprint(r))
	_, err = r.Buffer(ctx)
	require.ErrorIs(t, err, interop.ErrNotMapped)

	m, err := interop.MapResources(ctx, f.s, r)
	require.NoError(t, err)
	b, err := r.Buffer(ctx)
	require.NoError(t, err)
	assert.EqualValues(t, 256, b.Size())
	b2, err := r.Buffer(ctx)
	require.NoError(t, err)
	assert.Same(t, b, b2, "one buffer per mapping")
	in := make([]uint32, 64)
	for i := range in {
		in[i] = uint32(i*i + 7)
	}
	testdev.Write(t, ctx, b, in)
	out := make([]uint32, 64)
	testdev.Read(t, ctx, out, b)
	assert.Equal(t, in, out)

	_, err = interop.MapResources(ctx, f.s, r)
	require.ErrorIs(t, err, interop.ErrAlreadyMapped)
	require.ErrorIs(t, r.Close(ctx), interop.ErrAlreadyMapped)

	require.NoError(t, m.Unmap(ctx, f.s).Wait(ctx))
	require.ErrorIs(t, f.s.Memset(ctx, b, 0).Wait(ctx), core.ErrClosed, "the mapped buffer after Unmap")
	require.ErrorIs(t, m.Unmap(ctx, f.s).Wait(ctx), interop.ErrNotMapped)
	_, err = r.Buffer(ctx)
	require.ErrorIs(t, err, interop.ErrNotMapped)

	// Mapped again: the same GL memory, which kept what CUDA wrote.
	m, err = interop.MapResources(ctx, f.s, r)
	require.NoError(t, err)
	b, err = r.Buffer(ctx)
	require.NoError(t, err)
	testdev.Read(t, ctx, out, b)
	assert.Equal(t, in, out)
	require.NoError(t, m.Unmap(ctx, f.s).Wait(ctx))
	require.NoError(t, r.Close(ctx))
	require.ErrorIs(t, r.Close(ctx), core.ErrClosed)
	_, err = interop.MapResources(ctx, f.s, r)
	require.ErrorIs(t, err, core.ErrClosed)
	assert.Equal(t, 1, f.st.unregister)
	testdev.RequireUsable(t, f.dev)
}

// A GL image mapped is an alloc.Array for array copies; Close of it is refused and it refuses
// use after the unmap.
func TestGLImageArrayOnTheModel(t *testing.T) {
	ctx := testdev.Ctx(t)
	f := newGLFixture(t)
	r, err := interop.RegisterGLImage(ctx, f.gl, 3, interop.GLTexture2D, interop.RegisterSurfaceLoadStore)
	require.NoError(t, err)
	_, err = r.Buffer(ctx)
	require.ErrorIs(t, err, core.ErrInvalidArgument)
	m, err := interop.MapResources(ctx, f.s, r)
	require.NoError(t, err)
	a, err := r.Array(ctx, 0, 0)
	require.NoError(t, err)
	assert.Equal(t, alloc.Extent{W: 8, H: 4}, a.Extent())
	in := make([]float32, 32)
	for i := range in {
		in[i] = float32(i) / 4
	}
	require.NoError(t, alloc.CopyToArray(ctx, f.s, a, a.Whole(), in).Wait(ctx))
	out := make([]float32, 32)
	require.NoError(t, alloc.CopyFromArray(ctx, f.s, out, a, a.Whole()).Wait(ctx))
	assert.Equal(t, in, out)
	require.ErrorIs(t, a.Close(ctx), core.ErrInvalidArgument, "the user frees no lent array")
	_, err = r.Array(ctx, 1, 0)
	require.ErrorIs(t, err, cudaerr.InvalidValue)

	require.NoError(t, m.Unmap(ctx, f.s).Wait(ctx))
	require.ErrorIs(t, alloc.CopyFromArray(ctx, f.s, out, a, a.Whole()).Wait(ctx), core.ErrClosed)
	testdev.RequireUsable(t, f.dev)
}

// Every GL call ran with the context current on the device's thread, which is also the thread
// Run's function runs on; Detach unregisters what is left (unmapping it first) and releases
// the context.
func TestGLContextIsCurrentOnTheDeviceThread(t *testing.T) {
	ctx := testdev.Ctx(t)
	f := newGLFixture(t)
	var tid int
	require.NoError(t, f.gl.Run(ctx, func() error {
		tid = syscall.Gettid()
		return nil
	}))
	f.st.mu.Lock()
	assert.Same(t, f.c, f.st.current[tid], "the context is current on the thread Run ran on")
	f.st.mu.Unlock()
	boom := errors.New("boom")
	require.ErrorIs(t, f.gl.Run(ctx, func() error { return boom }), boom)

	r1, err := interop.RegisterGLBuffer(ctx, f.gl, 1)
	require.NoError(t, err)
	r2, err := interop.RegisterGLImage(ctx, f.gl, 2, interop.GLTexture2D)
	require.NoError(t, err)
	_, err = interop.MapResources(ctx, f.s, r1, r2)
	require.NoError(t, err)
	require.NoError(t, f.gl.Detach(ctx))
	assert.Equal(t, 2, f.st.unregister)
	assert.Equal(t, 1, f.c.releases)
	require.ErrorIs(t, f.gl.Detach(ctx), core.ErrClosed)
	require.ErrorIs(t, f.gl.Run(ctx, func() error { return nil }), core.ErrClosed)
	_, err = interop.RegisterGLBuffer(ctx, f.gl, 1)
	require.ErrorIs(t, err, core.ErrClosed)
	require.ErrorIs(t, r1.Close(ctx), core.ErrClosed)
	testdev.RequireUsable(t, f.dev)
}

// Bad input is refused with an error naming it, and leaves everything registered as it was.
func TestGraphicsBadInputOnTheModel(t *testing.T) {
	ctx := testdev.Ctx(t)
	f := newGLFixture(t)
	_, err := interop.RegisterGLBuffer(ctx, f.gl, 0)
	require.ErrorIs(t, err, core.ErrInvalidArgument)
	_, err = interop.RegisterGLBuffer(ctx, f.gl, 99)
	require.ErrorIs(t, err, cudaerr.InvalidValue)
	assert.Contains(t, err.Error(), "GL buffer 99")
	_, err = interop.RegisterGLBuffer(ctx, f.gl, 4, interop.RegisterReadOnly, interop.RegisterWriteDiscard)
	require.ErrorIs(t, err, core.ErrInvalidArgument)
	_, err = interop.RegisterGLBuffer(ctx, f.gl, 4, interop.RegisterFlag(0x100))
	require.ErrorIs(t, err, core.ErrInvalidArgument)
	_, err = interop.RegisterGLImage(ctx, f.gl, 4, 0x1234)
	require.ErrorIs(t, err, core.ErrInvalidArgument)
	_, err = interop.AttachGL(ctx, f.dev, nil)
	require.ErrorIs(t, err, core.ErrInvalidArgument)
	_, err = interop.AttachGL(ctx, f.dev, &fakeGL{st: f.st, fail: errors.New("no display")})
	require.ErrorContains(t, err, "no display")
	other := &fakeGL{st: f.st, name: "C", devices: []int{1, 2}}
	_, err = interop.AttachGL(ctx, f.dev, other)
	require.ErrorIs(t, err, core.ErrWrongDevice, "a context of other GPUs")
	require.ErrorContains(t, err, "[1 2]")
	assert.Equal(t, 1, other.releases, "released from the device's thread again")
	require.NoError(t, f.gl.Run(ctx, func() error { return nil }), "the attached context still works")

	r, err := interop.RegisterGLBuffer(ctx, f.gl, 4)
	require.NoError(t, err)
	require.ErrorIs(t, r.SetMapFlags(ctx, interop.MapFlag(7)), core.ErrInvalidArgument)
	require.NoError(t, r.SetMapFlags(ctx, interop.MapReadOnly))
	_, err = interop.MapResources(ctx, f.s)
	require.ErrorIs(t, err, core.ErrInvalidArgument)
	_, err = interop.MapResources(ctx, f.s, r, r)
	require.ErrorIs(t, err, core.ErrInvalidArgument)
	_, err = interop.MapResources(ctx, f.s, r, nil)
	require.ErrorIs(t, err, core.ErrInvalidArgument)
	_, err = interop.MapResources(ctx, nil, r)
	require.ErrorIs(t, err, core.ErrInvalidArgument)
	_, err = r.Array(ctx, 0, 0)
	require.ErrorIs(t, err, core.ErrInvalidArgument)

	// A second context's resources map separately, not together.
	c2 := &fakeGL{st: f.st, name: "B"}
	gl2, err := interop.AttachGL(ctx, f.dev, c2)
	require.NoError(t, err)
	r2, err := interop.RegisterGLBuffer(ctx, gl2, 6)
	require.NoError(t, err)
	_, err = interop.MapResources(ctx, f.s, r, r2)
	require.ErrorIs(t, err, core.ErrInvalidArgument)
	m, err := interop.MapResources(ctx, f.s, r2)
	require.NoError(t, err)
	// A stream of another device is refused by Unmap.
	otherDev := testdev.OpenOn(t, ctx, sim.New())
	os, err := streams.New(ctx, otherDev)
	require.NoError(t, err)
	require.ErrorIs(t, m.Unmap(ctx, os).Wait(ctx), core.ErrWrongDevice)
	_, err = interop.MapResources(ctx, os, r)
	require.ErrorIs(t, err, core.ErrWrongDevice)
	require.NoError(t, m.Unmap(ctx, f.s).Wait(ctx))
	require.NoError(t, r.Close(ctx))
	testdev.RequireUsable(t, f.dev)
	// gl2's resource is left to the device's Close, which must unregister it.
}

// A caller whose ctx ends while its map runs leaves nothing mapped: the resource maps again.
func TestMapOfACallerWhoLeftOnTheModel(t *testing.T) {
	ctx := testdev.Ctx(t)
	f := newGLFixture(t)
	r, err := interop.RegisterGLBuffer(ctx, f.gl, 8)
	require.NoError(t, err)
	f.st.holdMap = make(chan struct{})
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := interop.MapResources(cctx, f.s, r)
		done <- err
	}()
	<-f.st.holdMap // mapped, on the device's thread
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
	f.st.holdMap <- struct{}{}
	f.st.holdMap = nil
	require.NoError(t, f.dev.Synchronize(ctx))
	f.st.mu.Lock()
	handles := make([]backend.GraphicsResource, 0, len(f.st.res))
	for h := range f.st.res {
		handles = append(handles, h)
	}
	f.st.mu.Unlock()
	require.Len(t, handles, 1)
	assert.False(t, f.st.mapped(handles[0]), "unmapped for the caller who left")
	m, err := interop.MapResources(ctx, f.s, r)
	require.NoError(t, err, "the resource maps again")
	require.NoError(t, m.Unmap(ctx, f.s).Wait(ctx))
	require.NoError(t, r.Close(ctx))
}
