package device

import (
	"context"

	"github.com/gpuactor/gpuactor/actor"
)

// The Async copies queue work in device order and return a future that completes once the
// copy is queued, like LaunchAsync: later copies, launches and Synchronize on the device see
// its result. They take pinned memory (HostBuffer) only, because the device reads or writes
// the host side after the call returns: src or dst must not be changed, read or freed until a
// Synchronize (or any synchronous call on the device) has returned. Freeing a HostBuffer waits
// for the device's queued work first, so a Free never pulls memory from under a copy.

// CopyToDeviceAsync queues a copy of the first Size(dst) bytes of pinned src into dst.
func CopyToDeviceAsync(ctx context.Context, dst Mem, src *HostBuffer) *actor.Future[struct{}] {
	d, err := owner("copy destination", dst)
	if err != nil {
		return actor.Completed(struct{}{}, err)
	}
	return call(ctx, d, func() (struct{}, error) {
		p, n, err := d.span("copy destination", dst)
		if err != nil {
			return struct{}{}, err
		}
		if err := d.hostSpan("copy source", src, n); err != nil {
			return struct{}{}, err
		}
		return struct{}{}, d.dev.CopyHtoD(p, src.p, n, d.stream)
	})
}

// CopyFromDeviceAsync queues a copy of all of src into the start of pinned dst.
func CopyFromDeviceAsync(ctx context.Context, dst *HostBuffer, src Mem) *actor.Future[struct{}] {
	d, err := owner("copy source", src)
	if err != nil {
		return actor.Completed(struct{}{}, err)
	}
	return call(ctx, d, func() (struct{}, error) {
		p, n, err := d.span("copy source", src)
		if err != nil {
			return struct{}{}, err
		}
		if err := d.hostSpan("copy destination", dst, n); err != nil {
			return struct{}{}, err
		}
		return struct{}{}, d.dev.CopyDtoH(dst.p, p, n, d.stream)
	})
}

// CopyAsync queues a copy of all of src into the start of dst, on one device.
func CopyAsync(ctx context.Context, dst, src Mem) *actor.Future[struct{}] {
	d, err := owner("copy destination", dst)
	if err != nil {
		return actor.Completed(struct{}{}, err)
	}
	return call(ctx, d, func() (struct{}, error) {
		dp, dn, err := d.span("copy destination", dst)
		if err != nil {
			return struct{}{}, err
		}
		sp, sn, err := d.span("copy source", src)
		if err != nil {
			return struct{}{}, err
		}
		if sn > dn {
			return struct{}{}, outOfRange("copy of %d bytes into a %d-byte destination", sn, dn)
		}
		return struct{}{}, d.dev.CopyDtoD(dp, sp, sn, d.stream)
	})
}

// hostSpan checks that pinned buffer h, of this device, holds at least n bytes. Actor thread.
func (d *Device) hostSpan(what string, h *HostBuffer, n uint64) error {
	if h == nil {
		return invalid("%s is a nil host buffer", what)
	}
	if h.dev != d {
		return wrongDevice(what+" (host buffer)", h.dev, d)
	}
	if h.freed.Load() {
		return freedErr("%s: host buffer used after Free", what)
	}
	if n > h.size {
		return outOfRange("copy of %d bytes with a %d-byte %s", n, h.size, what)
	}
	return nil
}
