package streams

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync/atomic"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
)

// HostFunc queues fn to run when the stream reaches this point; later work on the stream
// waits until fn returns. fn runs on a goroutine of its own, never on CUDA's callback thread,
// and its future completes once the GPU has passed it; a panic in fn becomes the future's
// error (*actor.PanicError).
//
// fn may queue more work (on any stream) without waiting for it, but it must not wait on this
// stream, on work queued after it, or on the device as a whole: that work cannot start before
// fn returns, so the wait would never end. Device.Synchronize, Close and Shutdown and
// Stream.Synchronize and Close called from fn fail at once with device.ErrInHostFunc.
func (s *Stream) HostFunc(ctx context.Context, fn func()) *Future {
	if s == nil {
		return nilStream("HostFunc")
	}
	if fn == nil {
		return failed(core.Invalid("HostFunc of a nil function"))
	}
	var panicked atomic.Pointer[actor.PanicError]
	dev := s.core().Device()
	then := func(err error) error {
		if p := panicked.Load(); err == nil && p != nil {
			return p
		}
		return err
	}
	return core.QueueTracked(ctx, s.core(), func(rt backend.Device, _ *core.Tracker, h backend.Stream) error {
		err := rt.LaunchHostFunc(h, func() {
			// CUDA's thread only hands over to a goroutine and waits: it must not run Go code
			// that might block on the device, nor call CUDA.
			finished := make(chan struct{})
			go func() {
				defer close(finished)
				defer dev.EnterHostFunc()()
				defer func() {
					if r := recover(); r != nil {
						panicked.Store(&actor.PanicError{Value: r, Stack: debug.Stack()})
					}
				}()
				fn()
			}()
			<-finished
		})
		if err != nil {
			return fmt.Errorf("gpuactor/streams: queueing a host function: %w", err)
		}
		return nil
	}, core.Tracking{Then: then})
}
