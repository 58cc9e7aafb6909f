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

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
	"github.com/gpuactor/gpuactor/internal/sim"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/interop"
	"github.com/gpuactor/gpuactor/streams"
)

// extBackend is the simulator with a model of the runtime's external objects, so that the
// lifecycle gpuactor builds on them (descriptor ownership, mapped buffers freed before the
// memory is destroyed, signals and waits in stream order, destroy once) is tested without an
// exporter: the runtime's rules, as its documentation states them, are checked as calls come.
type extBackend struct {
	backend.Backend
	st *extState
}

func (b extBackend) Open(ordinal int) (backend.Device, error) {
	d, err := b.Backend.Open(ordinal)
	if err != nil {
		return nil, err
	}
	return &extDevice{Device: d, st: b.st}, nil
}

type extState struct {
	mu        sync.Mutex
	next      uintptr
	mems      map[backend.ExternalMemory]map[backend.DevicePtr]bool // live memory: its mapped buffers
	mipmaps   map[backend.MipmappedArray]backend.ExternalMemory     // live mapped mipmapped arrays: their memory
	mipFlags  []uint32                                              // the flags each mapping of one was asked with
	sems      map[backend.ExternalSemaphore]bool
	ops       []string // signals and waits, in the order the streams ran them
	destroyed int
	faults    []string // broken rules
	// Semaphore nodes of graphs (external_graph_fake_test.go): a node's list, and an
	// executable graph's list for a node.
	semNodes map[backend.GraphNode][]backend.SemaphoreOp
	execSems map[[2]uintptr][]backend.SemaphoreOp
}

func newExtState() *extState {
	return &extState{next: 0x1000, mems: map[backend.ExternalMemory]map[backend.DevicePtr]bool{}, sems: map[backend.ExternalSemaphore]bool{},
		mipmaps:  map[backend.MipmappedArray]backend.ExternalMemory{},
		semNodes: map[backend.GraphNode][]backend.SemaphoreOp{}, execSems: map[[2]uintptr][]backend.SemaphoreOp{}}
}

func (s *extState) fault(format string, args ...any) {
	s.faults = append(s.faults, fmt.Sprintf(format, args...))
}

type extDevice struct {
	backend.Device
	st *extState
}

// takeFD is the runtime taking ownership: it closes the descriptor once imported.
func (d *extDevice) takeFD(fd int) error {
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return cudaerr.New("import", cudaerr.InvalidValue)
	}
	return syscall.Close(fd)
}

func (d *extDevice) ImportExternalMemoryFD(fd int, size uint64, _ uint32) (backend.ExternalMemory, error) {
	if size == 13 { // the model's refusal: the descriptor stays the caller's
		return 0, cudaerr.New("cudaImportExternalMemory", cudaerr.InvalidValue)
	}
	if err := d.takeFD(fd); err != nil {
		return 0, err
	}
	d.st.mu.Lock()
	defer d.st.mu.Unlock()
	d.st.next++
	h := backend.ExternalMemory(d.st.next)
	d.st.mems[h] = map[backend.DevicePtr]bool{}
	return h, nil
}

// imported is what m has mapped as buffers, or, m destroyed, the fault and the runtime's error
// for call, the mapping the caller was asked for.
func (d *extDevice) imported(m backend.ExternalMemory, call string) (map[backend.DevicePtr]bool, error) {
	d.st.mu.Lock()
	mapped, ok := d.st.mems[m]
	d.st.mu.Unlock()
	if !ok {
		d.st.fault("%s of destroyed memory %#x", call, m)
		return nil, cudaerr.New(call, cudaerr.InvalidResourceHandle)
	}
	return mapped, nil
}

func (d *extDevice) ExternalMemoryMappedBuffer(m backend.ExternalMemory, _, size uint64) (backend.DevicePtr, error) {
	mapped, err := d.imported(m, "cudaExternalMemoryGetMappedBuffer")
	if err != nil {
		return 0, err
	}
	p, err := d.Device.Malloc(size)
	if err != nil {
		return 0, err
	}
	d.st.mu.Lock()
	mapped[p] = true
	d.st.mu.Unlock()
	return p, nil
}

func (d *extDevice) Free(p backend.DevicePtr) error {
	d.st.mu.Lock()
	for _, mapped := range d.st.mems {
		delete(mapped, p)
	}
	d.st.mu.Unlock()
	return d.Device.Free(p)
}

func (d *extDevice) DestroyExternalMemory(m backend.ExternalMemory) error {
	d.st.mu.Lock()
	defer d.st.mu.Unlock()
	mapped, ok := d.st.mems[m]
	if !ok {
		d.st.fault("destroying memory %#x twice", m)
		return cudaerr.New("cudaDestroyExternalMemory", cudaerr.InvalidResourceHandle)
	}
	if len(mapped) != 0 {
		d.st.fault("destroying memory %#x with %d buffers still mapped", m, len(mapped))
	}
	for a, of := range d.st.mipmaps {
		if of == m {
			d.st.fault("destroying memory %#x with mipmapped array %#x still mapped", m, a)
		}
	}
	delete(d.st.mems, m)
	d.st.destroyed++
	return nil
}

func (d *extDevice) ImportExternalSemaphoreFD(fd int, _ backend.ExternalSemaphoreKind) (backend.ExternalSemaphore, error) {
	if err := d.takeFD(fd); err != nil {
		return 0, err
	}
	d.st.mu.Lock()
	defer d.st.mu.Unlock()
	d.st.next++
	h := backend.ExternalSemaphore(d.st.next)
	d.st.sems[h] = true
	return h, nil
}

// semOp queues a record of op on s with a host function, so that the log is in GPU order.
func (d *extDevice) semOp(op string, sem backend.ExternalSemaphore, value uint64, s backend.Stream) error {
	d.st.mu.Lock()
	live := d.st.sems[sem]
	d.st.mu.Unlock()
	if !live {
		d.st.fault("%s on destroyed semaphore %#x", op, sem)
		return cudaerr.New(op, cudaerr.InvalidResourceHandle)
	}
	return d.Device.LaunchHostFunc(s, func() {
		d.st.mu.Lock()
		d.st.ops = append(d.st.ops, fmt.Sprintf("%s %d", op, value))
		d.st.mu.Unlock()
	})
}

func (d *extDevice) SignalExternalSemaphore(sem backend.ExternalSemaphore, value uint64, s backend.Stream) error {
	return d.semOp("signal", sem, value, s)
}

func (d *extDevice) WaitExternalSemaphore(sem backend.ExternalSemaphore, value uint64, s backend.Stream) error {
	return d.semOp("wait", sem, value, s)
}

func (d *extDevice) DestroyExternalSemaphore(sem backend.ExternalSemaphore) error {
	d.st.mu.Lock()
	defer d.st.mu.Unlock()
	if !d.st.sems[sem] {
		d.st.fault("destroying semaphore %#x twice", sem)
		return cudaerr.New("cudaDestroyExternalSemaphore", cudaerr.InvalidResourceHandle)
	}
	delete(d.st.sems, sem)
	d.st.destroyed++
	return nil
}

func openExt(t *testing.T) (*device.Device, *extState) {
	st := newExtState()
	ctx := testdev.Ctx(t)
	cd, err := core.Open(ctx, extBackend{Backend: sim.New(), st: st}, core.Config{}, 0)
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = cd.Close()
		st.mu.Lock()
		defer st.mu.Unlock()
		assert.Empty(t, st.faults)
		assert.Empty(t, st.mems, "memory left undestroyed after the device's Close")
		assert.Empty(t, st.mipmaps, "mipmapped arrays left mapped after the device's Close")
		assert.Empty(t, st.sems, "semaphores left undestroyed after the device's Close")
	})
	return (*device.Device)(cd), st
}

// openExtMemory is openExt with size bytes of memory imported and a stream to use it on.
func openExtMemory(t *testing.T, ctx context.Context, size uint64) (*extState, *interop.ExternalMemory, *streams.Stream) {
	t.Helper()
	dev, st := openExt(t)
	m, err := interop.ImportMemory(ctx, dev, int(externalFile(t).Fd()), size)
	require.NoError(t, err)
	s, err := streams.New(ctx, dev)
	require.NoError(t, err)
	return st, m, s
}

func TestExternalMemoryLifecycle(t *testing.T) {
	ctx := testdev.Ctx(t)
	dev, st := openExt(t)
	f := externalFile(t)
	before := openFDs(t)

	m, err := interop.ImportMemory(ctx, dev, int(f.Fd()), 1<<16)
	require.NoError(t, err)
	assert.EqualValues(t, 1<<16, m.Size())
	assert.Equal(t, dev, m.Device())
	assert.Equal(t, before, openFDs(t), "the runtime owns (and here closed) the duplicate")
	_, err = f.WriteString("x")
	require.NoError(t, err, "the caller's descriptor stays open")

	// The runtime's refusal closes the duplicate it did not take.
	_, err = interop.ImportMemory(ctx, dev, int(f.Fd()), 13)
	require.ErrorIs(t, err, cudaerr.InvalidValue)
	assert.Equal(t, before, openFDs(t))

	// Mapped buffers are ordinary buffers.
	a, err := m.MapBuffer(ctx, 0, 4096)
	require.NoError(t, err)
	b, err := m.MapBuffer(ctx, 4096, 1<<15)
	require.NoError(t, err)
	s, err := streams.New(ctx, dev)
	require.NoError(t, err)
	require.NoError(t, s.Memset(ctx, a, 3).Wait(ctx))
	require.NoError(t, s.Copy(ctx, b.Slice(0, 4096), a).Wait(ctx))
	got := make([]byte, 4096)
	testdev.Read(t, ctx, got, b)
	require.Equal(t, byte(3), got[100])

	// Ranges past the end, and size 0.
	_, err = m.MapBuffer(ctx, 1<<16, 1)
	require.ErrorIs(t, err, core.ErrOutOfRange)
	_, err = m.MapBuffer(ctx, 1<<15, 1<<15+1)
	require.ErrorIs(t, err, core.ErrOutOfRange)
	_, err = m.MapBuffer(ctx, ^uint64(0), 2)
	require.ErrorIs(t, err, core.ErrOutOfRange)
	_, err = m.MapBuffer(ctx, 0, 0)
	require.ErrorIs(t, err, core.ErrInvalidArgument)

	// One buffer closed by its holder, the other left to the memory's Close.
	require.NoError(t, a.Close(ctx))
	require.NoError(t, m.Close(ctx))
	require.ErrorIs(t, s.Memset(ctx, b, 0).Wait(ctx), core.ErrClosed)
	require.ErrorIs(t, b.Close(ctx), core.ErrClosed)
	require.ErrorIs(t, m.Close(ctx), core.ErrClosed)
	_, err = m.MapBuffer(ctx, 0, 16)
	require.ErrorIs(t, err, core.ErrClosed)

	st.mu.Lock()
	assert.Equal(t, 1, st.destroyed)
	assert.Empty(t, st.mems)
	st.mu.Unlock()

	// Left open: the device's Close frees the buffers, then destroys the memory (checked in
	// openExt's cleanup).
	m2, err := interop.ImportMemory(ctx, dev, int(f.Fd()), 8192)
	require.NoError(t, err)
	_, err = m2.MapBuffer(ctx, 0, 8192)
	require.NoError(t, err)
}

func TestExternalSemaphoreLifecycle(t *testing.T) {
	ctx := testdev.Ctx(t)
	dev, st := openExt(t)
	f := externalFile(t)
	before := openFDs(t)

	sem, err := interop.ImportSemaphore(ctx, dev, int(f.Fd()), interop.TimelineSemaphore)
	require.NoError(t, err)
	assert.Equal(t, interop.TimelineSemaphore, sem.Kind())
	assert.Equal(t, dev, sem.Device())
	assert.Equal(t, before, openFDs(t))

	s, err := streams.New(ctx, dev)
	require.NoError(t, err)
	futs := []*streams.Future{
		sem.Wait(ctx, s, 1),
		sem.Signal(ctx, s, 2),
		sem.Wait(ctx, s, 3),
		sem.Signal(ctx, s, 4),
	}
	for _, f := range futs {
		require.NoError(t, f.Wait(ctx))
	}
	st.mu.Lock()
	assert.Equal(t, []string{"wait 1", "signal 2", "wait 3", "signal 4"}, st.ops)
	st.mu.Unlock()

	// A closed stream, a nil one, another device's.
	closed, err := streams.New(ctx, dev)
	require.NoError(t, err)
	require.NoError(t, closed.Close(ctx))
	require.ErrorIs(t, sem.Signal(ctx, closed, 5).Wait(ctx), core.ErrClosed)
	require.ErrorIs(t, sem.Wait(ctx, nil, 5).Wait(ctx), core.ErrInvalidArgument)
	other, _ := simDevice(t, ctx)
	require.ErrorIs(t, sem.Signal(ctx, streams.Default(other), 5).Wait(ctx), core.ErrWrongDevice)

	// Close after queued work: the queued signal still happens, later ones are refused.
	last := sem.Signal(ctx, s, 6)
	require.NoError(t, sem.Close(ctx))
	require.NoError(t, last.Wait(ctx))
	require.ErrorIs(t, sem.Signal(ctx, s, 7).Wait(ctx), core.ErrClosed)
	require.ErrorIs(t, sem.Close(ctx), core.ErrClosed)
	st.mu.Lock()
	assert.Equal(t, "signal 6", st.ops[len(st.ops)-1])
	assert.Equal(t, 1, st.destroyed)
	st.mu.Unlock()

	// A binary one left open: the device's Close destroys it.
	_, err = interop.ImportSemaphore(ctx, dev, int(f.Fd()), interop.BinarySemaphore)
	require.NoError(t, err)
}

// Goroutines map, use and close buffers while another closes the memory: every MapBuffer
// either gives a working buffer or ErrClosed, and the memory is destroyed once, after every
// mapping was freed (the model's faults, checked in openExt's cleanup).
func TestExternalMemoryConcurrentClose(t *testing.T) {
	ctx := testdev.Ctx(t)
	st, m, s := openExtMemory(t, ctx, 1<<20)

	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make(chan error, 64)
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for i := range 8 {
				b, err := m.MapBuffer(ctx, uint64(g*4096), 4096)
				if err != nil {
					if !errors.Is(err, core.ErrClosed) {
						errs <- err
					}
					return
				}
				// The memory's Close may close b under us: ErrClosed then, nothing else.
				if err := s.Memset(ctx, b, byte(i)).Wait(ctx); err != nil && !errors.Is(err, core.ErrClosed) {
					errs <- err
				}
				if err := b.Close(ctx); err != nil && !errors.Is(err, core.ErrClosed) {
					errs <- err
				}
			}
		}()
	}
	close(start)
	require.NoError(t, m.Close(ctx))
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	assert.Equal(t, 1, st.destroyed)
	assert.Empty(t, st.mems)
}
