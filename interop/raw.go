package interop

import (
	"context"
	"errors"
	"fmt"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
	"github.com/gpuactor/gpuactor/streams"
)

// Raw handles the other way round: gpuactor's own handles go to other libraries through
// streams.Stream.Handle, streams.Event.Handle and device.Buffer.DevicePtr; WrapStream, WrapEvent and
// WrapPointer bring another library's stream, event and memory into gpuactor.

// The runtime's special stream handles, which name no stream of their own.
const (
	rawStreamLegacy    = 1 // cudaStreamLegacy
	rawStreamPerThread = 2 // cudaStreamPerThread
)

// WrapStream makes a stream of dev over h, a cudaStream_t another library of this process
// created on dev in its primary context (as the runtime API, and libraries built on it, do),
// so that gpuactor's operations (copies, launches, events, semaphore waits)
// queue on it in order with the other library's work; it returns once the stream is
// registered on dev's actor.
//
// gpuactor never destroys h: the stream's Close (or dev's Close) waits for the work gpuactor
// queued on it, completing its futures, and then forgets the handle. The other library must
// keep h alive until that Close has returned, and destroys it afterwards. Work the other
// library queues is not tracked by gpuactor's futures (see streams.Stream.Handle).
//
// What can be checked is: h must not be 0 (the legacy default stream) or one of the runtime's
// special handles (cudaStreamLegacy, cudaStreamPerThread), which gpuactor never queues on;
// nor a stream gpuactor already tracks on dev (use that stream, or Close the first wrap
// before wrapping again); the runtime must know it as a stream (cudaStreamGetFlags), of dev
// (cudaStreamGetDevice, on a runtime that has it: 12.8+). All of those are ErrInvalidArgument
// or ErrWrongDevice errors. The runtime cannot tell a garbage pointer from a stream without
// reading it, so a handle that was never a stream may crash it: pass only live handles.
func WrapStream(ctx context.Context, dev *device.Device, h uintptr) (*streams.Stream, error) {
	if dev == nil {
		return nil, core.Invalid("WrapStream on a nil device")
	}
	switch h {
	case 0:
		return nil, core.Invalid("WrapStream of stream handle 0, the legacy default stream: gpuactor queues work only on explicit streams")
	case rawStreamLegacy, rawStreamPerThread:
		return nil, core.Invalid("WrapStream of the runtime's special stream handle %#x (cudaStreamLegacy or cudaStreamPerThread): gpuactor queues work only on explicit streams", h)
	}
	cd := (*core.Device)(dev)
	bh := backend.Stream(h)
	cs, err := core.WrapStream(ctx, cd, bh, func(rt backend.Device) (core.StreamConfig, error) {
		if cd.KnownStream(bh) {
			return core.StreamConfig{}, core.Invalid("WrapStream of stream %#x, which gpuactor already tracks on device %d: use that stream", h, cd.Ordinal())
		}
		flags, err := rt.StreamGetFlags(bh)
		if err != nil {
			return core.StreamConfig{}, fmt.Errorf("%w: WrapStream: %#x is not a live stream: %w", core.ErrInvalidArgument, h, err)
		}
		ord, err := rt.StreamGetDevice(bh)
		if err != nil {
			return core.StreamConfig{}, fmt.Errorf("%w: WrapStream: the device of stream %#x: %w", core.ErrInvalidArgument, h, err)
		}
		if ord >= 0 && ord != cd.Ordinal() {
			return core.StreamConfig{}, fmt.Errorf("%w: WrapStream: stream %#x belongs to device %d, not device %d", core.ErrWrongDevice, h, ord, cd.Ordinal())
		}
		prio, err := rt.StreamGetPriority(bh)
		if err != nil {
			return core.StreamConfig{}, fmt.Errorf("gpuactor/interop: WrapStream: the priority of stream %#x: %w", h, err)
		}
		return core.StreamConfig{Blocking: flags&backend.StreamNonBlocking == 0, Priority: prio, HasPriority: true}, nil
	})
	if err != nil {
		return nil, err
	}
	return (*streams.Stream)(cs), nil
}

// IsWrapped reports whether s is another library's stream, made by WrapStream.
func IsWrapped(s *streams.Stream) bool {
	return s != nil && (*core.Stream)(s).Foreign()
}

// WrapEvent makes an event of dev over h, a cudaEvent_t another library of this process
// created on dev, made with flags (the streams.EventFlag values of the flags it was created
// with), so that gpuactor's streams record it, wait for it and time with it in order with the
// other library's work; it returns once the event is registered on dev's actor.
//
// gpuactor never destroys h: the event's Close (or dev's Close) forgets it. The other library
// must keep h alive until that Close has returned, and destroys it afterwards. A record the
// other library makes is one like gpuactor's: a stream that waits for the event waits for the
// latest record, whoever made it.
//
// What can be checked is: h must not be 0, nor an event gpuactor already tracks on dev (use
// that event, or Close the first wrap before wrapping again), and the runtime must know it as
// an event (cudaEventQuery): ErrInvalidArgument errors. The runtime cannot say which device
// an event belongs to: recording one of another device fails when it is recorded. A handle
// that was never an event may crash the runtime: pass only live handles.
func WrapEvent(ctx context.Context, dev *device.Device, h uintptr, flags ...streams.EventFlag) (*streams.Event, error) {
	if dev == nil {
		return nil, core.Invalid("WrapEvent on a nil device")
	}
	if h == 0 {
		return nil, core.Invalid("WrapEvent of event handle 0")
	}
	var f streams.EventFlag
	for _, fl := range flags {
		f |= fl
	}
	cd := (*core.Device)(dev)
	bh := backend.Event(h)
	e, err := core.WrapEvent(ctx, cd, bh, uint32(f), func(rt backend.Device) error {
		if cd.KnownEvent(bh) {
			return core.Invalid("WrapEvent of event %#x, which gpuactor already tracks on device %d: use that event", h, cd.Ordinal())
		}
		if err := rt.EventQuery(bh); err != nil && !errors.Is(err, cudaerr.NotReady) {
			return fmt.Errorf("%w: WrapEvent: %#x is not a live event: %w", core.ErrInvalidArgument, h, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return (*streams.Event)(e), nil
}

// IsWrappedEvent reports whether e is another library's event, made by WrapEvent.
func IsWrappedEvent(e *streams.Event) bool {
	return e != nil && (*core.Event)(e).Foreign()
}

// WrapPointer makes a buffer of dev over size bytes of device memory at p that another library
// of this process allocated on dev (cudaMalloc, a framework's allocator, managed memory), so
// that copies, memsets and kernel launches take it like any buffer; it returns once the buffer
// is registered on dev's actor.
//
// gpuactor never frees p: the buffer's Close (or dev's Close) waits for the work queued on dev
// so far and forgets it. The other library must keep the memory allocated until that Close
// has returned. The buffer counts in dev's usage as imported memory, which the memory limit
// does not cap.
//
// p must be non-zero and size positive; the runtime must know both p and p+size-1 as device
// (or managed) memory of dev (cudaPointerGetAttributes): memory it does not know, host memory
// and another device's memory are ErrInvalidArgument or ErrWrongDevice errors. The runtime
// cannot say whether the two ends lie in one allocation: the range is the caller's word.
func WrapPointer(ctx context.Context, dev *device.Device, p uintptr, size uint64) (*device.Buffer, error) {
	if dev == nil {
		return nil, core.Invalid("WrapPointer on a nil device")
	}
	if p == 0 {
		return nil, core.Invalid("WrapPointer of a null pointer")
	}
	if size == 0 {
		return nil, core.Invalid("WrapPointer of 0 bytes")
	}
	if uint64(p)+size-1 < uint64(p) {
		return nil, core.OutOfRange("WrapPointer of %d bytes at %#x runs past the end of the address space", size, p)
	}
	cd := (*core.Device)(dev)
	return core.Make(ctx, cd, func(rt backend.Device, _ *core.Tracker) (*device.Buffer, error) {
		for _, q := range []uintptr{p, p + uintptr(size-1)} {
			if err := checkDevicePointer(rt, cd, p, size, q); err != nil {
				return nil, err
			}
		}
		if err := cd.Charge(core.KindImported, size); err != nil { // not limited: never refused
			return nil, err
		}
		b := new(device.Buffer)
		cd.Adopt((*core.Buffer)(b), cuda.DevicePtr(p), size, core.KindImported, forgetMemory)
		return b, nil
	}, func(_ backend.Device, _ *core.Tracker, b *device.Buffer) { _ = cd.FreeNow((*core.Buffer)(b)) })
}

// forgetMemory is the release of memory gpuactor does not own: nothing to free.
func forgetMemory(backend.Device, cuda.DevicePtr, backend.Stream) error { return nil }

// checkDevicePointer checks that q, one end of WrapPointer's [p, p+size), is device or managed
// memory of cd; on the actor thread.
func checkDevicePointer(rt backend.Device, cd *core.Device, p uintptr, size uint64, q uintptr) error {
	a, err := rt.PointerAttributes(q)
	if err != nil {
		return fmt.Errorf("%w: WrapPointer of %d bytes at %#x: asking the runtime about %#x: %w", core.ErrInvalidArgument, size, p, q, err)
	}
	switch a.Type {
	case backend.MemoryDevice, backend.MemoryManaged:
	case backend.MemoryHost:
		return core.Invalid("WrapPointer of %d bytes at %#x: %#x is pinned host memory, not device memory", size, p, q)
	default:
		return core.Invalid("WrapPointer of %d bytes at %#x: the runtime knows no allocation at %#x", size, p, q)
	}
	if a.Device != cd.Ordinal() {
		return fmt.Errorf("%w: WrapPointer of %d bytes at %#x: %#x is memory of device %d, not device %d", core.ErrWrongDevice, size, p, q, a.Device, cd.Ordinal())
	}
	return nil
}
