package device

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"unsafe"
)

// Numeric is the element types the typed copy helpers move.
type Numeric interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~int |
		~uint8 | ~uint16 | ~uint32 | ~uint64 | ~uint | ~uintptr |
		~float32 | ~float64
}

// CopyToDevice copies all of src to the start of dst (a *Buffer or a Slice). dst must be at
// least as large as src; src may be any Go slice or HostSlice of pinned memory (faster).
// When CopyToDevice returns, src may be reused — also when ctx was cancelled: a copy that had
// already started finishes before CopyToDevice returns.
func CopyToDevice[T Numeric](ctx context.Context, dst Mem, src []T) error {
	d, err := owner("copy destination", dst)
	if err != nil {
		return err
	}
	if src == nil {
		return invalid("copy source is a nil slice")
	}
	n := byteLen(src)
	if n == 0 {
		return invalid("copy source is an empty slice")
	}
	p := unsafe.Pointer(unsafe.SliceData(src))
	err = hostCopy(ctx, d, func() error {
		ptr, size, err := d.span("copy destination", dst)
		if err != nil {
			return err
		}
		if n > size {
			return outOfRange("copy of %d bytes into a %d-byte destination", n, size)
		}
		if err := d.dev.CopyHtoD(ptr, p, n, d.stream); err != nil {
			return err
		}
		return d.dev.StreamSynchronize(d.stream)
	})
	runtime.KeepAlive(src)
	return err
}

// CopyFromDevice fills all of dst from the start of src (a *Buffer or a Slice). src must be at
// least as large as dst. When CopyFromDevice returns, dst holds the data — also when ctx was
// cancelled after the copy had started (it then still returns ctx's error).
func CopyFromDevice[T Numeric](ctx context.Context, dst []T, src Mem) error {
	d, err := owner("copy source", src)
	if err != nil {
		return err
	}
	if dst == nil {
		return invalid("copy destination is a nil slice")
	}
	n := byteLen(dst)
	if n == 0 {
		return invalid("copy destination is an empty slice")
	}
	p := unsafe.Pointer(unsafe.SliceData(dst))
	err = hostCopy(ctx, d, func() error {
		ptr, size, err := d.span("copy source", src)
		if err != nil {
			return err
		}
		if n > size {
			return outOfRange("copy of %d bytes from a %d-byte source", n, size)
		}
		if err := d.dev.CopyDtoH(p, ptr, n, d.stream); err != nil {
			return err
		}
		return d.dev.StreamSynchronize(d.stream)
	})
	runtime.KeepAlive(dst)
	return err
}

// Copy copies all of src into the start of dst; both must live on the same device.
func Copy(ctx context.Context, dst, src Mem) error {
	d, err := owner("copy destination", dst)
	if err != nil {
		return err
	}
	return do(ctx, d, func() error {
		dp, dn, err := d.span("copy destination", dst)
		if err != nil {
			return err
		}
		sp, sn, err := d.span("copy source", src)
		if err != nil {
			return err
		}
		if sn > dn {
			return outOfRange("copy of %d bytes into a %d-byte destination", sn, dn)
		}
		if err := d.dev.CopyDtoD(dp, sp, sn, d.stream); err != nil {
			return err
		}
		return d.dev.StreamSynchronize(d.stream)
	})
}

// Memset sets every byte of dst to value.
func Memset(ctx context.Context, dst Mem, value byte) error {
	d, err := owner("memset destination", dst)
	if err != nil {
		return err
	}
	return do(ctx, d, func() error {
		p, n, err := d.span("memset destination", dst)
		if err != nil {
			return err
		}
		if err := d.dev.Memset(p, value, n, d.stream); err != nil {
			return err
		}
		return d.dev.StreamSynchronize(d.stream)
	})
}

// hostCopy runs a copy that touches Go memory. A caller cancelled before the op begins
// withdraws it and returns at once; once the op has begun, the caller waits for it even if
// ctx is cancelled, so that the slice is never touched after the call returns.
func hostCopy(ctx context.Context, d *Device, op func() error) error {
	const (
		pending int32 = iota
		begun
		withdrawn
	)
	var state atomic.Int32
	f := call(ctx, d, func() (struct{}, error) {
		if !state.CompareAndSwap(pending, begun) {
			return struct{}{}, context.Canceled
		}
		return struct{}{}, op()
	})
	_, err := f.Await(ctx)
	if err != nil && !f.Ready() {
		if state.CompareAndSwap(pending, withdrawn) {
			return err
		}
		_, opErr := f.Await(context.Background()) // the op owns the slice until it finishes
		return fmt.Errorf("%w (the copy had begun and was completed: %v)", err, opErr)
	}
	return err
}

func byteLen[T Numeric](s []T) uint64 {
	var zero T
	return uint64(len(s)) * uint64(unsafe.Sizeof(zero))
}
