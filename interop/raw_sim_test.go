package interop_test

import (
	"context"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/interop"
	"github.com/gpuactor/gpuactor/sim"
	"github.com/gpuactor/gpuactor/streams"
)

// onActor runs fn on dev's actor thread with its backend: how the tests play "another
// library" that calls the runtime directly.
func onActor[T any](t *testing.T, ctx context.Context, dev *device.Device, fn func(rt backend.Device) (T, error)) T {
	t.Helper()
	v, err := core.Run(ctx, (*core.Device)(dev), func(rt backend.Device, _ *core.Tracker) (T, error) { return fn(rt) }).Await(ctx)
	require.NoError(t, err)
	return v
}

func simDevice(t *testing.T, ctx context.Context) (*device.Device, []device.Option) {
	opts := []device.Option{device.WithSimulator(sim.New(sim.WithDevices(testdev.SimDevices))), device.WithKernelCache(t.TempDir())}
	return testdev.Open(t, ctx, opts), opts
}

func TestRawHandles(t *testing.T) {
	testdev.Backends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		dev := testdev.Open(t, ctx, opts)
		s1, err := streams.New(ctx, dev)
		require.NoError(t, err)
		s2, err := streams.New(ctx, dev)
		require.NoError(t, err)
		ev, err := streams.NewEvent(ctx, dev)
		require.NoError(t, err)

		assert.NotZero(t, s1.Handle())
		assert.NotZero(t, s2.Handle())
		assert.NotEqual(t, s1.Handle(), s2.Handle())
		assert.NotZero(t, streams.Default(dev).Handle())
		assert.NotEqual(t, s1.Handle(), streams.Default(dev).Handle())
		assert.NotZero(t, ev.Handle())
		assert.Zero(t, (*streams.Stream)(nil).Handle())
		assert.Zero(t, (*streams.Event)(nil).Handle())
		assert.False(t, interop.IsWrapped(s1))

		// The runtime knows the handles as what they are.
		flags := onActor(t, ctx, dev, func(rt backend.Device) (uint32, error) { return rt.StreamGetFlags(backend.Stream(s1.Handle())) })
		assert.Equal(t, backend.StreamNonBlocking, flags)
		require.NoError(t, onActor(t, ctx, dev, func(rt backend.Device) (error, error) {
			return nil, rt.EventQuery(backend.Event(ev.Handle()))
		}))
	})
}

// A stream another library made, wrapped: gpuactor's work runs on it, Close forgets it
// without destroying it, and the other library destroys it afterwards.
func TestWrapStream(t *testing.T) {
	testdev.Backends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		dev := testdev.Open(t, ctx, opts)
		least, greatest, err := streams.PriorityRange(ctx, dev)
		require.NoError(t, err)
		foreign := onActor(t, ctx, dev, func(rt backend.Device) (backend.Stream, error) {
			return rt.StreamCreate(backend.StreamDefault, greatest)
		})

		s, err := interop.WrapStream(ctx, dev, uintptr(foreign))
		require.NoError(t, err)
		assert.True(t, interop.IsWrapped(s))
		assert.Equal(t, uintptr(foreign), s.Handle())
		assert.True(t, s.IsBlocking(), "made with cudaStreamDefault")
		if least != greatest {
			assert.Equal(t, greatest, s.Priority())
		}

		// Wrapping it again, or one of gpuactor's own streams, is refused.
		_, err = interop.WrapStream(ctx, dev, uintptr(foreign))
		require.ErrorIs(t, err, core.ErrInvalidArgument)
		assert.ErrorContains(t, err, "already tracks")
		own, err := streams.New(ctx, dev)
		require.NoError(t, err)
		_, err = interop.WrapStream(ctx, dev, own.Handle())
		require.ErrorIs(t, err, core.ErrInvalidArgument)
		_, err = interop.WrapStream(ctx, dev, streams.Default(dev).Handle())
		require.ErrorIs(t, err, core.ErrInvalidArgument)

		// gpuactor's operations on it, in order, with futures.
		const n = 1 << 12
		buf, err := dev.MallocBytes(ctx, n*4)
		require.NoError(t, err)
		src := make([]uint32, n)
		for i := range src {
			src[i] = uint32(i) * 7
		}
		require.NoError(t, streams.CopyToDevice(ctx, s, buf, src).Wait(ctx))
		require.NoError(t, s.Memset(ctx, buf.Slice(0, 64), 0).Wait(ctx))
		require.NoError(t, s.Synchronize(ctx))
		got := make([]uint32, n)
		testdev.Read(t, ctx, got, buf)
		want := append(make([]uint32, 16), src[16:]...)
		require.Equal(t, want, got)

		require.NoError(t, s.Close(ctx))
		require.ErrorIs(t, s.Memset(ctx, buf, 0).Wait(ctx), core.ErrClosed)
		require.ErrorIs(t, s.Close(ctx), core.ErrClosed)

		// Still the other library's, alive: it can query and then destroy it.
		onActor(t, ctx, dev, func(rt backend.Device) (struct{}, error) { return struct{}{}, rt.StreamQuery(foreign) })
		onActor(t, ctx, dev, func(rt backend.Device) (struct{}, error) { return struct{}{}, rt.StreamDestroy(foreign) })

		// Once closed, wrapping it anew would be allowed; a destroyed handle is refused by
		// the runtime on the simulator (the real runtime cannot always tell).
		if strings.HasSuffix(t.Name(), "/sim") {
			_, err = interop.WrapStream(ctx, dev, uintptr(foreign))
			require.ErrorIs(t, err, core.ErrInvalidArgument)
		}
	})
}

func TestWrapStreamBadInput(t *testing.T) {
	ctx := testdev.Ctx(t)
	dev, opts := simDevice(t, ctx)
	for _, h := range []uintptr{0, 1, 2, 0xdead0000} {
		_, err := interop.WrapStream(ctx, dev, h)
		require.ErrorIs(t, err, core.ErrInvalidArgument, "handle %#x", h)
	}
	_, err := interop.WrapStream(ctx, nil, 0x1234)
	require.ErrorIs(t, err, core.ErrInvalidArgument)

	// A stream of every other device: refused by dev, wrapped by its own.
	devs := testdev.All(t, ctx, opts, dev)
	others := make([]backend.Stream, len(devs))
	for _, d := range devs[1:] {
		other := onActor(t, ctx, d, func(rt backend.Device) (backend.Stream, error) {
			return rt.StreamCreate(backend.StreamNonBlocking, 0)
		})
		others[d.Ordinal()] = other
		_, err = interop.WrapStream(ctx, dev, uintptr(other))
		require.ErrorIs(t, err, core.ErrWrongDevice, "device %d's stream", d.Ordinal())
		s1, err := interop.WrapStream(ctx, d, uintptr(other))
		require.NoError(t, err)
		require.NoError(t, s1.Synchronize(ctx))
	}

	// The device is still usable.
	s, err := streams.New(ctx, dev)
	require.NoError(t, err)
	require.NoError(t, s.Synchronize(ctx))

	// Closing a device with a wrapped stream still open forgets it: the other library can
	// destroy it afterwards.
	for _, d := range devs[1:] {
		require.NoError(t, d.Close())
		again, err := device.Open(ctx, d.Ordinal(), opts...)
		require.NoError(t, err)
		onActor(t, ctx, again, func(rt backend.Device) (struct{}, error) { return struct{}{}, rt.StreamDestroy(others[d.Ordinal()]) })
		require.NoError(t, again.Close())
	}
}

// Memory another library allocated, wrapped: usable as a buffer, never freed by gpuactor.
func TestWrapPointer(t *testing.T) {
	testdev.Backends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		dev := testdev.Open(t, ctx, opts)
		const n = 1 << 14
		p := onActor(t, ctx, dev, func(rt backend.Device) (cuda.DevicePtr, error) { return rt.Malloc(n * 4) })

		before := dev.Stats().Memory
		buf, err := interop.WrapPointer(ctx, dev, uintptr(p), n*4)
		require.NoError(t, err)
		assert.EqualValues(t, n*4, buf.Size())
		// Counted as imported, not as memory gpuactor allocated.
		u := dev.Stats().Memory
		assert.Equal(t, device.KindUsage{Bytes: before.Imported.Bytes + n*4, Count: before.Imported.Count + 1}, u.Imported)
		assert.Equal(t, before.DeviceBytes(), u.DeviceBytes())
		got, err := buf.DevicePtr(ctx)
		require.NoError(t, err)
		assert.Equal(t, p, got)

		src := make([]uint32, n)
		for i := range src {
			src[i] = uint32(i) ^ 0x5a5a
		}
		testdev.Write(t, ctx, buf, src)
		s, err := streams.New(ctx, dev)
		require.NoError(t, err)
		out := make([]uint32, n)
		require.NoError(t, streams.CopyFromDevice(ctx, s, out, buf).Wait(ctx))
		require.Equal(t, src, out)

		// A slice of the memory wraps too.
		part, err := interop.WrapPointer(ctx, dev, uintptr(p)+256, 1024)
		require.NoError(t, err)
		require.NoError(t, part.Close(ctx))

		require.NoError(t, buf.Close(ctx))
		assert.Equal(t, before.Imported, dev.Stats().Memory.Imported)
		require.ErrorIs(t, buf.Close(ctx), core.ErrClosed)
		require.ErrorIs(t, s.Memset(ctx, buf, 0).Wait(ctx), core.ErrClosed)

		// Still allocated: the other library reads it and frees it.
		back := make([]uint32, n)
		onActor(t, ctx, dev, func(rt backend.Device) (struct{}, error) {
			if err := rt.CopyDtoH(unsafe.Pointer(&back[0]), p, n*4, 0); err != nil {
				return struct{}{}, err
			}
			return struct{}{}, rt.StreamSynchronize(0)
		})
		require.Equal(t, src, back)
		onActor(t, ctx, dev, func(rt backend.Device) (struct{}, error) { return struct{}{}, rt.Free(p) })
	})
}

func TestWrapPointerBadInput(t *testing.T) {
	ctx := testdev.Ctx(t)
	dev, opts := simDevice(t, ctx)
	p := onActor(t, ctx, dev, func(rt backend.Device) (cuda.DevicePtr, error) { return rt.Malloc(4096) })

	_, err := interop.WrapPointer(ctx, dev, 0, 16)
	require.ErrorIs(t, err, core.ErrInvalidArgument)
	_, err = interop.WrapPointer(ctx, dev, uintptr(p), 0)
	require.ErrorIs(t, err, core.ErrInvalidArgument)
	_, err = interop.WrapPointer(ctx, dev, ^uintptr(0)-8, 64)
	require.ErrorIs(t, err, core.ErrOutOfRange)
	_, err = interop.WrapPointer(ctx, nil, uintptr(p), 16)
	require.ErrorIs(t, err, core.ErrInvalidArgument)
	_, err = interop.WrapPointer(ctx, dev, 0xdead0000, 64) // garbage: no allocation there
	require.ErrorIs(t, err, core.ErrInvalidArgument)
	assert.ErrorContains(t, err, "knows no allocation")
	_, err = interop.WrapPointer(ctx, dev, uintptr(p), 1<<20) // runs past the allocation
	require.ErrorIs(t, err, core.ErrInvalidArgument)

	host := make([]byte, 64)
	_, err = interop.WrapPointer(ctx, dev, uintptr(unsafe.Pointer(&host[0])), 64)
	require.ErrorIs(t, err, core.ErrInvalidArgument)

	for _, d := range testdev.All(t, ctx, opts, dev)[1:] {
		q := onActor(t, ctx, d, func(rt backend.Device) (cuda.DevicePtr, error) { return rt.Malloc(4096) })
		_, err = interop.WrapPointer(ctx, dev, uintptr(q), 4096)
		require.ErrorIs(t, err, core.ErrWrongDevice, "memory of device %d", d.Ordinal())
	}

	// Still usable; the device's Close forgets a wrapped buffer left open.
	b, err := interop.WrapPointer(ctx, dev, uintptr(p), 4096)
	require.NoError(t, err)
	require.NoError(t, streams.Default(dev).Memset(ctx, b, 1).Wait(ctx))
}

// An event another library made, wrapped: gpuactor's streams record it, wait for it and time
// with it; Close forgets it without destroying it, and the other library destroys it after.
func TestWrapEvent(t *testing.T) {
	testdev.Backends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		dev := testdev.Open(t, ctx, opts)
		foreign := onActor(t, ctx, dev, func(rt backend.Device) (backend.Event, error) { return rt.EventCreate(0) })

		ev, err := interop.WrapEvent(ctx, dev, uintptr(foreign))
		require.NoError(t, err)
		assert.True(t, interop.IsWrappedEvent(ev))
		assert.Equal(t, uintptr(foreign), ev.Handle())
		assert.Same(t, dev, ev.Device())

		// Wrapping it again, or one of gpuactor's own events, is refused.
		_, err = interop.WrapEvent(ctx, dev, uintptr(foreign))
		require.ErrorIs(t, err, core.ErrInvalidArgument)
		assert.ErrorContains(t, err, "already tracks")
		own, err := streams.NewEvent(ctx, dev)
		require.NoError(t, err)
		assert.False(t, interop.IsWrappedEvent(own))
		_, err = interop.WrapEvent(ctx, dev, own.Handle())
		require.ErrorIs(t, err, core.ErrInvalidArgument)

		// Recorded behind a copy on one stream, waited for by another, whose memset must
		// come after the copy; timed against gpuactor's own event.
		s1, err := streams.New(ctx, dev)
		require.NoError(t, err)
		s2, err := streams.New(ctx, dev)
		require.NoError(t, err)
		const n = 1 << 20
		buf, err := dev.MallocBytes(ctx, n*4)
		require.NoError(t, err)
		src := make([]uint32, n)
		for i := range src {
			src[i] = uint32(i) | 1
		}
		require.NoError(t, s1.Record(ctx, own).Wait(ctx))
		streams.CopyToDevice(ctx, s1, buf, src)
		rec := s1.Record(ctx, ev)
		require.NoError(t, s2.Wait(ctx, ev).Wait(ctx))
		require.NoError(t, s2.Memset(ctx, buf.Slice(0, 64), 0).Wait(ctx))
		require.NoError(t, rec.Wait(ctx))
		done, err := ev.Query(ctx)
		require.NoError(t, err)
		assert.True(t, done)
		got := make([]uint32, n)
		testdev.Read(t, ctx, got, buf)
		require.Equal(t, append(make([]uint32, 16), src[16:]...), got, "the memset waited for the copy")
		took, err := streams.Elapsed(ctx, own, ev)
		require.NoError(t, err)
		assert.GreaterOrEqual(t, took, time.Duration(0))

		require.NoError(t, ev.Close(ctx))
		require.ErrorIs(t, s1.Record(ctx, ev).Wait(ctx), core.ErrClosed)
		require.ErrorIs(t, ev.Close(ctx), core.ErrClosed)

		// Still the other library's, alive: it can query and then destroy it.
		onActor(t, ctx, dev, func(rt backend.Device) (struct{}, error) { return struct{}{}, rt.EventQuery(foreign) })
		onActor(t, ctx, dev, func(rt backend.Device) (struct{}, error) { return struct{}{}, rt.EventDestroy(foreign) })
		if strings.HasSuffix(t.Name(), "/sim") { // the real runtime cannot always tell
			_, err = interop.WrapEvent(ctx, dev, uintptr(foreign))
			require.ErrorIs(t, err, core.ErrInvalidArgument)
			assert.ErrorContains(t, err, "not a live event")
		}
		_, err = interop.WrapEvent(ctx, nil, uintptr(foreign))
		require.ErrorIs(t, err, core.ErrInvalidArgument)
		_, err = interop.WrapEvent(ctx, dev, 0)
		require.ErrorIs(t, err, core.ErrInvalidArgument)
		testdev.RequireUsable(t, dev)
	})
}
