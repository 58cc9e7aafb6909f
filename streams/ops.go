package streams

import (
	"context"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
)

// Future is the future of a stream-ordered operation: it completes when the GPU has passed the
// operation, or with the error that kept it from being queued or run. Wait on it, or join many
// with actor.WaitAll.
type Future = actor.Future[struct{}]

func failed(err error) *Future { return actor.Completed(struct{}{}, err) }

// nilStream is the future of op called on a nil stream: completed with an
// ErrInvalidArgument error naming both.
func nilStream(op string) *Future { return failed(core.Invalid("%s on a nil stream", op)) }

// Launch queues kernel k with shape cfg and args. args are int32, uint32, int64, uint64,
// float32, float64, cuda.DevicePtr values and device memory (a *device.Buffer, a
// device.Slice, a typed buffer of package alloc); a Go int or uint is accepted where the
// kernel's parameter is a known integer type it fits. They are checked against the kernel's
// signature and the device's limits before anything is queued. The future completes when the
// kernel has run.
func (s *Stream) Launch(ctx context.Context, k *device.Kernel, cfg cuda.LaunchConfig, args ...any) *Future {
	return core.Launch(ctx, s.core(), (*core.Kernel)(k), cfg, args)
}

// CopyHostToDevice queues a copy of the first Size(dst) bytes of pinned src into dst; the
// future completes when the copy is done. src must stay allocated until then.
func (s *Stream) CopyHostToDevice(ctx context.Context, dst device.Mem, src *device.HostBuffer) *Future {
	if s == nil {
		return nilStream("CopyHostToDevice")
	}
	cs := s.core()
	d := cs.Device()
	return core.Queue(ctx, cs, func(rt backend.Device, _ *core.Tracker, h backend.Stream) error {
		p, n, err := d.Resolve("copy destination", dst)
		if err != nil {
			return err
		}
		host, err := d.ResolveHost("copy source", (*core.HostBuffer)(src), n)
		if err != nil {
			return err
		}
		return rt.CopyHtoD(p, host, n, h)
	})
}

// CopyDeviceToHost queues a copy of all of src into the start of pinned dst; the future
// completes when dst holds the data.
func (s *Stream) CopyDeviceToHost(ctx context.Context, dst *device.HostBuffer, src device.Mem) *Future {
	if s == nil {
		return nilStream("CopyDeviceToHost")
	}
	cs := s.core()
	d := cs.Device()
	return core.Queue(ctx, cs, func(rt backend.Device, _ *core.Tracker, h backend.Stream) error {
		p, n, err := d.Resolve("copy source", src)
		if err != nil {
			return err
		}
		host, err := d.ResolveHost("copy destination", (*core.HostBuffer)(dst), n)
		if err != nil {
			return err
		}
		return rt.CopyDtoH(host, p, n, h)
	})
}

// Copy queues a copy of all of src into the start of dst; the future completes when the GPU
// has done the copy. Both may live on the stream's device, or one of them on another device:
// a peer copy (cudaMemcpyPeerAsync), direct over the link where the devices have one (see
// package interop for peer access) and staged by the runtime otherwise. For a peer copy the
// other device's buffer is checked on that device's actor before Copy returns, and its Close
// waits for the copy; order the copy after that device's writes to it, and that device's
// later use of it after the copy, with events (Record, Wait) or by waiting for futures. A
// copy between two devices neither of which is the stream's is an ErrWrongDevice error.
func (s *Stream) Copy(ctx context.Context, dst, src device.Mem) *Future {
	if s == nil {
		return nilStream("Copy")
	}
	cs := s.core()
	d := cs.Device()
	if crossDevice(d, dst, src) {
		return core.CopyAcross(ctx, cs, dst, src)
	}
	return core.Queue(ctx, cs, func(rt backend.Device, _ *core.Tracker, h backend.Stream) error {
		dp, dn, err := d.Resolve("copy destination", dst)
		if err != nil {
			return err
		}
		sp, sn, err := d.Resolve("copy source", src)
		if err != nil {
			return err
		}
		if sn > dn {
			return core.OutOfRange("copy of %d bytes into a %d-byte destination", sn, dn)
		}
		return rt.CopyDtoD(dp, sp, sn, h)
	})
}

// Memset queues setting every byte of dst to value; the future completes when it is done.
func (s *Stream) Memset(ctx context.Context, dst device.Mem, value byte) *Future {
	if s == nil {
		return nilStream("Memset")
	}
	cs := s.core()
	d := cs.Device()
	return core.Queue(ctx, cs, func(rt backend.Device, _ *core.Tracker, h backend.Stream) error {
		p, n, err := d.Resolve("memset destination", dst)
		if err != nil {
			return err
		}
		return rt.Memset(p, value, n, h)
	})
}

// Record records e at this point of the stream; the future completes when the GPU reaches it.
// e must belong to the stream's device.
func (s *Stream) Record(ctx context.Context, e *Event) *Future {
	if s == nil {
		return nilStream("Record")
	}
	if e == nil {
		return failed(core.Invalid("Record of a nil event"))
	}
	ce, cs := e.core(), s.core()
	if ce.Device() != cs.Device() {
		return failed(core.WrongDevice("event", ce.Device(), cs.Device()))
	}
	return ce.Record(ctx, cs)
}

// Wait makes the work queued on the stream after it wait until e's most recent record has
// completed on the GPU. e may belong to another device; then Wait first waits, on the calling
// goroutine, until that device has issued the records sent before it (devices' actors run
// independently), so Record on one device then Wait on another, from one goroutine, is ordered
// as written. The future completes when the GPU has passed the wait.
func (s *Stream) Wait(ctx context.Context, e *Event) *Future {
	if s == nil {
		return nilStream("Wait")
	}
	if e == nil {
		return failed(core.Invalid("Wait on a nil event"))
	}
	ce, cs := e.core(), s.core()
	if ce.Device() != cs.Device() {
		if err := ce.AwaitRecorded(ctx); err != nil {
			return failed(err)
		}
	}
	return core.Queue(ctx, cs, func(rt backend.Device, _ *core.Tracker, h backend.Stream) error {
		eh, err := ce.Handle()
		if err != nil {
			return err
		}
		return rt.StreamWaitEvent(h, eh)
	})
}

// crossDevice reports whether dst or src lives on a device other than d (nil buffers are left
// to the ordinary path's checks).
func crossDevice(d *core.Device, dst, src device.Mem) bool {
	for _, m := range []device.Mem{dst, src} {
		if m == nil {
			continue
		}
		if o, err := core.Owner("", m); err == nil && o != d {
			return true
		}
	}
	return false
}
