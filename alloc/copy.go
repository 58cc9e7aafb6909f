package alloc

import (
	"context"
	"unsafe"

	"github.com/gpuactor/gpuactor/internal/core"
	"github.com/gpuactor/gpuactor/streams"
)

// CopyIn copies src into the start of the buffer, ordered on the buffer's stream after the
// work queued there so far (through streams.CopyToDevice), and returns once the copy has
// completed on the GPU: src may then be reused. When ctx ends after the copy was queued,
// CopyIn still waits for the copy, so that src is never touched after it returns, and then
// returns ctx's error. src must not be longer than the buffer.
func (b *Buffer[T]) CopyIn(ctx context.Context, src []T) error {
	if err := b.checkCopy("CopyIn", len(src)); err != nil {
		return err
	}
	return settle(ctx, streams.CopyToDevice(ctx, b.stream, b, asBytes(src)))
}

// CopyOut fills dst from the start of the buffer, ordered on the buffer's stream after the
// work queued there so far (through streams.CopyFromDevice), and returns once dst holds the
// data. When ctx ends after the copy was queued, CopyOut still waits for it, as CopyIn does.
// dst must not be longer than the buffer.
func (b *Buffer[T]) CopyOut(ctx context.Context, dst []T) error {
	if err := b.checkCopy("CopyOut", len(dst)); err != nil {
		return err
	}
	return settle(ctx, streams.CopyFromDevice(ctx, b.stream, asBytes(dst), b))
}

func (b *Buffer[T]) checkCopy(what string, n int) error {
	if b == nil || b.Buffer == nil {
		return core.Invalid("%s with a nil buffer", what)
	}
	if n == 0 {
		return core.Invalid("%s of an empty slice", what)
	}
	if n > b.n {
		return core.OutOfRange("%s of %d elements with a buffer of %d", what, n, b.n)
	}
	return nil
}

// settle waits for f; when ctx ends first, it waits for f all the same (the operation owns
// the caller's slice until then) and returns ctx's error.
func settle(ctx context.Context, f *streams.Future) error {
	err := f.Wait(ctx)
	if err != nil && !f.Ready() {
		_ = f.Wait(context.WithoutCancel(ctx))
	}
	return err
}

// asBytes views a slice of plain values (elemSize has checked T) as its bytes.
func asBytes[T any](xs []T) []byte {
	var zero T
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(xs))), len(xs)*int(unsafe.Sizeof(zero)))
}
