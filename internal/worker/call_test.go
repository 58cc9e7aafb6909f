//go:build linux

package worker_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/internal/testproc"
	"github.com/gpuactor/gpuactor/internal/worker"
)

// start starts a test worker, closed at the test's end.
func start(t testing.TB, opts ...worker.Option) *worker.Process {
	t.Helper()
	p, err := worker.Start(context.Background(), opts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// startFunc starts a test worker over one transport.
type startFunc func(t testing.TB, opts ...worker.Option) *worker.Process

// eachTransport runs test over the shared-memory rings and over the control socket.
func eachTransport(t *testing.T, test func(t *testing.T, start startFunc)) {
	for _, tr := range []struct {
		name string
		opt  worker.Option
	}{{"rings", worker.WithRingSize(worker.DefaultRingSize)}, {"socket", worker.WithRingSize(0)}} {
		t.Run(tr.name, func(t *testing.T) {
			test(t, func(t testing.TB, opts ...worker.Option) *worker.Process {
				return start(t, append([]worker.Option{tr.opt}, opts...)...)
			})
		})
	}
}

func TestEchoAndClose(t *testing.T) {
	eachTransport(t, func(t *testing.T, start startFunc) {
		ctx := context.Background()
		p := start(t)
		assert.Positive(t, p.Pid())
		assert.GreaterOrEqual(t, p.MaxMessage(), 64<<10-32)

		got, err := p.Call(ctx, []byte("hello"))
		require.NoError(t, err)
		assert.Equal(t, "hello", string(got))
		got, err = p.Call(ctx, []byte("pid"))
		require.NoError(t, err)
		assert.Equal(t, strconv.Itoa(p.Pid()), string(got), "served by the worker, not by the parent")
		got, err = p.Call(ctx, nil)
		require.NoError(t, err)
		assert.Empty(t, got, "an empty request is a request")
		require.NoError(t, p.Err())

		require.NoError(t, p.Close())
		require.NoError(t, p.Close(), "twice")
		select {
		case <-p.Done():
		default:
			t.Fatal("Done is not closed after Close")
		}
		require.NoError(t, p.Err(), "a closed worker did not fail")
		_, err = p.Call(ctx, []byte("late"))
		require.ErrorIs(t, err, worker.ErrClosed)
		assert.NotContains(t, testproc.Children(), p.Pid())
	})
}

// Calls from one goroutine are served in the order made.
func TestCallsFromOneGoroutineInOrder(t *testing.T) {
	ctx := context.Background()
	p := start(t)
	for i := 1; i <= 100; i++ {
		got, err := p.Call(ctx, []byte("count"))
		require.NoError(t, err)
		require.Equal(t, strconv.Itoa(i), string(got))
	}
}

// 1,024 calls from 32 goroutines: each gets its own response.
func TestConcurrentCalls(t *testing.T) {
	eachTransport(t, func(t *testing.T, start startFunc) {
		ctx := context.Background()
		p := start(t)
		var wg sync.WaitGroup
		errs := make(chan error, 32)
		for g := range 32 {
			wg.Go(func() {
				for i := range 32 {
					want := fmt.Appendf(nil, "goroutine %d call %d %s", g, i, bytes.Repeat([]byte{'x'}, g*i))
					got, err := p.Call(ctx, want)
					if err == nil && !bytes.Equal(got, want) {
						err = fmt.Errorf("goroutine %d call %d got %q", g, i, got)
					}
					if err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	})
}

func TestHandlerErrors(t *testing.T) {
	ctx := context.Background()
	p := start(t)
	_, err := p.Call(ctx, []byte("fail:0"))
	re, ok := errors.AsType[*worker.RemoteError](err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, worker.CodeGeneric, re.Code)
	assert.Equal(t, "plain failure", re.Message)

	_, err = p.Call(ctx, []byte("fail:700"))
	re, ok = errors.AsType[*worker.RemoteError](err)
	require.True(t, ok)
	assert.Equal(t, int64(700), re.Code, "a handler's own code crosses")
	assert.Contains(t, err.Error(), "failure 700")

	got, err := p.Call(ctx, []byte("still here"))
	require.NoError(t, err, "a handler's error leaves the worker serving")
	assert.Equal(t, "still here", string(got))
}

// A codec on both sides rebuilds typed errors, as the CUDA layer will rebuild cudaerr values.
func TestErrorCodec(t *testing.T) {
	ctx := context.Background()
	p := start(t, worker.WithEnv(modeVar+"=codec"), worker.WithErrorCodec(testCodec{}))
	_, err := p.Call(ctx, []byte("fail:42"))
	require.ErrorIs(t, err, errSentinel)
	_, err = p.Call(ctx, []byte("fail:5"))
	re, ok := errors.AsType[*worker.RemoteError](err)
	require.True(t, ok)
	assert.Equal(t, int64(5), re.Code)
}

func TestTooLarge(t *testing.T) {
	eachTransport(t, func(t *testing.T, start startFunc) {
		ctx := context.Background()
		p := start(t)
		max := p.MaxMessage()
		got, err := p.Call(ctx, make([]byte, max))
		require.NoError(t, err, "the largest request fits")
		assert.Len(t, got, max)

		_, err = p.Call(ctx, make([]byte, max+1))
		require.ErrorIs(t, err, worker.ErrTooLarge)
		assert.Contains(t, err.Error(), strconv.Itoa(max+1))

		_, err = p.Call(ctx, fmt.Appendf(nil, "big:%d", max+1))
		require.ErrorIs(t, err, worker.ErrTooLarge, "a response too large fails its call only")
		got, err = p.Call(ctx, []byte("ok"))
		require.NoError(t, err)
		assert.Equal(t, "ok", string(got))
	})
}

// A call abandoned by its ctx leaves no trace: its late response is dropped, and the next
// call gets its own.
func TestCancelledCall(t *testing.T) {
	eachTransport(t, func(t *testing.T, start startFunc) {
		p := start(t)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		_, err := p.Call(ctx, []byte("sleep:200ms"))
		require.ErrorIs(t, err, context.DeadlineExceeded)
		got, err := p.Call(context.Background(), []byte("next"))
		require.NoError(t, err)
		assert.Equal(t, "next", string(got))

		done, cancel2 := context.WithCancel(context.Background())
		cancel2()
		_, err = p.Call(done, []byte("never sent"))
		require.ErrorIs(t, err, context.Canceled)
	})
}

// A small ring bounds the message: larger ones fail clearly, both ways, and the worker goes on.
func TestSmallRing(t *testing.T) {
	ctx := context.Background()
	p := start(t, worker.WithRingSize(4096))
	assert.Equal(t, 4096-8-24, p.MaxMessage(), "the ring's record header, then the frame's")
	_, err := p.Call(ctx, make([]byte, 5000))
	require.ErrorIs(t, err, worker.ErrTooLarge)
	_, err = p.Call(ctx, []byte("big:5000"))
	require.ErrorIs(t, err, worker.ErrTooLarge)
	got, err := p.Call(ctx, make([]byte, p.MaxMessage()))
	require.NoError(t, err)
	assert.Len(t, got, p.MaxMessage())
}

// Posted requests are served in order with the calls, and get no answer: 1,000 posted
// "count"s, then a call, which sees them all; a posted failure leaves the worker serving.
func TestPostServedInOrderWithCalls(t *testing.T) {
	eachTransport(t, func(t *testing.T, start startFunc) {
		ctx := context.Background()
		p := start(t)
		for range 1000 {
			require.NoError(t, p.Post(ctx, []byte("count")))
		}
		require.NoError(t, p.Post(ctx, []byte("fail:0")))
		got, err := p.Call(ctx, []byte("count"))
		require.NoError(t, err)
		assert.Equal(t, "1001", string(got))
		_, err = p.Call(ctx, []byte("big:1"))
		require.NoError(t, err, "no stray answer of a posted request")
		require.NoError(t, p.Close())
		require.ErrorIs(t, p.Post(ctx, []byte("count")), worker.ErrClosed)
	})
}

// A post to a worker that died fails with its death.
func TestPostToADeadWorker(t *testing.T) {
	ctx := context.Background()
	p := start(t)
	require.NoError(t, p.Post(ctx, []byte("crash-in:1ms")))
	<-p.Done()
	require.ErrorIs(t, p.Post(ctx, []byte("count")), worker.ErrWorkerDied)
	require.ErrorIs(t, p.Post(ctx, make([]byte, p.MaxMessage()+1)), worker.ErrTooLarge)
}

// Started calls are served in order with the posts and calls around them, their answers
// wait until collected, in any order; one abandoned through a done context leaves its late
// answer to nobody; a started call to a worker that dies fails with its death.
func TestStartedCalls(t *testing.T) {
	eachTransport(t, func(t *testing.T, start startFunc) {
		ctx := context.Background()
		p := start(t)
		var started []worker.Pending
		for i := range 5 {
			require.NoError(t, p.Post(ctx, []byte("count")))
			c, err := p.Start(ctx, []byte("count"))
			require.NoError(t, err, "start %d", i)
			started = append(started, c)
		}
		for i := len(started) - 1; i >= 0; i-- { // collected last first
			got, err := started[i].Wait(ctx)
			require.NoError(t, err)
			assert.Equal(t, strconv.Itoa(2*i+2), string(got), "call %d saw the requests before it", i)
		}

		slow, err := p.Start(ctx, []byte("sleep:50ms"))
		require.NoError(t, err)
		done, cancel := context.WithCancel(ctx)
		cancel()
		_, err = slow.Wait(done)
		require.ErrorIs(t, err, context.Canceled)
		got, err := p.Call(ctx, []byte("next"))
		require.NoError(t, err)
		assert.Equal(t, "next", string(got), "the abandoned answer went to nobody")

		_, err = p.Start(ctx, make([]byte, p.MaxMessage()+1))
		require.ErrorIs(t, err, worker.ErrTooLarge)
		_, err = p.Start(done, []byte("never sent"))
		require.ErrorIs(t, err, context.Canceled)

		require.NoError(t, p.Post(ctx, []byte("crash-in:1ms")))
		blocked, err := p.Start(ctx, []byte("block"))
		require.NoError(t, err)
		_, err = blocked.Wait(ctx)
		require.ErrorIs(t, err, worker.ErrWorkerDied, "a started call fails with the worker's death")
		_, err = p.Start(ctx, []byte("count"))
		require.ErrorIs(t, err, worker.ErrWorkerDied)
	})
}
