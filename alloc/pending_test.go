package alloc_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
	"github.com/gpuactor/gpuactor/internal/testfix"
	"github.com/gpuactor/gpuactor/streams"
)

// MallocAsync returns before the device has made the memory; these tests pin down what that
// means for uses, errors, DevicePtr, frees and cancellation.

// holdActor occupies dev's actor until release is called (or the test ends): messages sent
// meanwhile queue behind it, so a buffer allocated meanwhile is certainly still pending. fail,
// when not nil, is what the occupying op returns.
func holdActor(t *testing.T, ctx context.Context, dev *device.Device, fail error) (release func()) {
	t.Helper()
	started, hold := make(chan struct{}), make(chan struct{})
	op := core.Run(ctx, (*core.Device)(dev), func(backend.Device, *core.Tracker) (struct{}, error) {
		close(started)
		<-hold
		return struct{}{}, fail
	})
	<-started
	var once sync.Once
	release = func() {
		once.Do(func() {
			close(hold)
			_ = op.Wait(context.Background())
		})
	}
	t.Cleanup(release) // before the device's own cleanup closes it
	return release
}

// A buffer is usable at once: a memset, a launch taking it, a copy out and a free, all queued
// while the device has not run its allocation yet, see the memory.
func TestMallocAsyncUseWhilePending(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.Stream(t)
		const n = 1000
		release := holdActor(t, f.Ctx, f.Dev, nil)
		b, made, err := alloc.MallocAsync[uint32](f.Ctx, s, n)
		require.NoError(t, err)
		require.False(t, made.Ready(), "the allocation cannot have run: the actor is held")
		set := s.Memset(f.Ctx, b, 0)
		cfg := cuda.LaunchConfig{Grid: cuda.Dim(4), Block: cuda.Dim(256)}
		add := s.Launch(f.Ctx, f.add, cfg, b, uint32(5), int32(n))
		addHalf := s.Launch(f.Ctx, f.add, cfg, b.Elems(0, n/2), uint32(1), int32(n/2))
		out := make([]uint32, n)
		copied := make(chan error, 1)
		go func() { copied <- streams.CopyFromDevice(f.Ctx, b.Stream(), out, b).Wait(f.Ctx) }()
		release()
		testfix.Await(t, f.Ctx, made)
		testfix.Await(t, f.Ctx, set)
		testfix.Await(t, f.Ctx, add)
		testfix.Await(t, f.Ctx, addHalf)
		require.NoError(t, <-copied)
		for i, v := range out {
			want := uint32(5)
			if i < n/2 {
				want++
			}
			require.Equal(t, want, v, "element %d", i)
		}
		testfix.Await(t, f.Ctx, b.CloseOn(f.Ctx, nil))
		require.Zero(t, f.Dev.Stats().Memory.Async.Count)
	})
}

// Many goroutines allocate and use their buffers without ever waiting for an allocation:
// launches, memsets, copies in and out, frees. Run with -race, this also checks that nothing
// reads a buffer's address off the actor thread before the actor has written it.
func TestMallocAsyncImmediateUseConcurrent(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		const workers, rounds = 8, 20
		ss := []*streams.Stream{f.Stream(t), f.Stream(t), f.Stream(t)}
		cfg := cuda.LaunchConfig{Grid: cuda.Dim(16), Block: cuda.Dim(256)}
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		for w := range workers {
			wg.Go(func() {
				s := ss[w%len(ss)]
				for r := range rounds {
					n := 1 + (w*rounds+r)%4096
					b, _, err := alloc.MallocAsync[uint32](f.Ctx, s, n)
					if err != nil {
						errs <- err
						return
					}
					s.Memset(f.Ctx, b, 0)
					s.Launch(f.Ctx, f.add, cfg, b, uint32(w+1), int32(n))
					out := make([]uint32, n)
					if err := streams.CopyFromDevice(f.Ctx, s, out, b).Wait(f.Ctx); err != nil {
						errs <- err
						return
					}
					for i, v := range out {
						if v != uint32(w+1) {
							errs <- fmt.Errorf("worker %d round %d: element %d is %d, want %d", w, r, i, v, w+1)
							return
						}
					}
					in := make([]uint32, n)
					for i := range in {
						in[i] = uint32(w<<20 | r<<12 | i)
					}
					if err := streams.CopyToDevice(f.Ctx, s, b, in).Wait(f.Ctx); err != nil {
						errs <- err
						return
					}
					s.Launch(f.Ctx, f.add, cfg, b.Elems(0, n), uint32(1), int32(n))
					if err := streams.CopyFromDevice(f.Ctx, s, out, b).Wait(f.Ctx); err != nil {
						errs <- err
						return
					}
					for i := range in {
						if out[i] != in[i]+1 {
							errs <- fmt.Errorf("worker %d round %d: element %d is %#x, want %#x", w, r, i, out[i], in[i]+1)
							return
						}
					}
					if r%2 == 0 {
						b.CloseOn(f.Ctx, nil)
					} else if err := b.Close(f.Ctx); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		for _, s := range ss {
			require.NoError(t, s.Synchronize(f.Ctx))
		}
		require.Zero(t, f.Dev.Stats().Memory.Async.Count)
		require.Zero(t, f.Dev.Stats().Memory.Async.Bytes)
	})
}

// An allocation the device refuses when it runs it: the future carries the error, every use
// of the buffer fails with device.ErrAllocFailed wrapping it, freeing it is an error too, and
// nothing stays counted.
func TestMallocAsyncFailureSurfaces(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.Stream(t)
		// CUDA rounds a pool's maximum up to its own granularity (a 4 MiB cap let 8 MiB
		// through on an H100), so the cap and the request are far apart.
		p := newPool(t, f, alloc.MaxSize(64*mib))
		before := f.Dev.Stats().Memory
		b, made, err := alloc.MallocAsync[uint32](f.Ctx, s, 32*mib, alloc.FromPool(p)) // 128 MiB
		require.NoError(t, err)
		allocErr := made.Wait(f.Ctx)
		require.ErrorIs(t, allocErr, cudaerr.MemoryAllocation)
		require.Equal(t, before, f.Dev.Stats().Memory, "a failed allocation is not counted")

		// Every use reports it, through its future: staged copies on the buffer's stream, other
		// stream operations.
		other, _, err := alloc.MallocAsync[uint32](f.Ctx, s, 4)
		require.NoError(t, err)
		pinned, err := f.Dev.MallocPinnedBytes(f.Ctx, 4)
		require.NoError(t, err)
		for name, fut := range map[string]*streams.Future{
			"staged copy in":   streams.CopyToDevice(f.Ctx, b.Stream(), b, []uint32{1}),
			"staged copy out":  streams.CopyFromDevice(f.Ctx, b.Stream(), []uint32{1}, b),
			"Memset":           s.Memset(f.Ctx, b, 0),
			"Launch":           s.Launch(f.Ctx, f.add, one(), b, uint32(1), int32(1)),
			"Elems":            s.Launch(f.Ctx, f.add, one(), b.Elems(1, 2), uint32(1), int32(1)),
			"Copy to":          s.Copy(f.Ctx, b, other),
			"Copy from":        s.Copy(f.Ctx, other, b),
			"CopyHostToDevice": s.CopyHostToDevice(f.Ctx, b.Elems(0, 1), pinned),
			"CopyDeviceToHost": s.CopyDeviceToHost(f.Ctx, pinned, b.Elems(0, 1)),
		} {
			err := fut.Wait(f.Ctx)
			require.ErrorIs(t, err, device.ErrAllocFailed, name)
			require.ErrorIs(t, err, allocErr, name)
		}
		require.NoError(t, pinned.Close(f.Ctx))

		addr, err := b.DevicePtr(f.Ctx)
		require.Zero(t, addr, "a failed allocation has no address")
		require.ErrorIs(t, err, device.ErrAllocFailed)
		require.ErrorIs(t, err, allocErr)

		// Freeing it is a clear error, whichever way, and changes nothing.
		require.ErrorIs(t, b.Close(f.Ctx), device.ErrAllocFailed)
		err = b.CloseOn(f.Ctx, nil).Wait(f.Ctx)
		require.ErrorIs(t, err, device.ErrAllocFailed)
		require.ErrorIs(t, b.Buffer.Close(f.Ctx), device.ErrAllocFailed)
		require.NoError(t, other.Close(f.Ctx))
		after := f.Dev.Stats().Memory
		after.Pinned = before.Pinned // the stream's staging ring, made by the copies above
		require.Equal(t, before, after)
		requireStreamUsable(t, f, s)
	})
}

// The memory limit is checked as MallocAsync is called: over it, MallocAsync fails at once and
// nothing is counted; a free queued makes room at once for the next allocation, in the
// caller's order, whether or not the device has run the free yet.
func TestMallocAsyncLimitIsSynchronous(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.Stream(t)
		a, _, err := alloc.MallocAsync[byte](f.Ctx, s, 10*mib)
		require.NoError(t, err)
		release := holdActor(t, f.Ctx, f.Dev, nil)
		_, _, err = alloc.MallocAsync[byte](f.Ctx, s, 7*mib)
		require.ErrorIs(t, err, device.ErrMemoryLimit)
		require.Equal(t, uint64(1), f.Dev.Stats().Memory.Async.Count)
		require.NoError(t, a.Close(f.Ctx)) // queued behind the held actor
		require.Zero(t, f.Dev.Stats().Memory.DeviceBytes(), "a queued free is not counted")
		b, _, err := alloc.MallocAsync[byte](f.Ctx, s, 15*mib)
		require.NoError(t, err, "the queued free made room")
		require.Equal(t, uint64(15*mib), f.Dev.Stats().Memory.DeviceBytes())
		release()
		require.NoError(t, streams.CopyToDevice(f.Ctx, b.Stream(), b, []byte{1, 2, 3}).Wait(f.Ctx))
		require.NoError(t, b.Close(f.Ctx))
		require.Zero(t, f.Dev.Stats().Memory.DeviceBytes())
	}, device.WithMemoryLimit(16*mib))
}

// Concurrent allocations never pass the limit together: the check and the count are one step.
func TestMallocAsyncLimitConcurrent(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.Stream(t)
		const workers, each = 8, 10
		var mu sync.Mutex
		var got []*alloc.Buffer[byte]
		var wg sync.WaitGroup
		errs := make(chan error, workers*each)
		for range workers {
			wg.Go(func() {
				for range each {
					b, _, err := alloc.MallocAsync[byte](f.Ctx, s, mib)
					if errors.Is(err, device.ErrMemoryLimit) {
						continue
					}
					if err != nil {
						errs <- err
						return
					}
					mu.Lock()
					got = append(got, b)
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		require.Len(t, got, 16, "exactly the limit's worth of 1 MiB allocations is granted")
		require.Equal(t, uint64(16*mib), f.Dev.Stats().Memory.DeviceBytes())
		for _, b := range got {
			require.NoError(t, b.Close(f.Ctx))
		}
		require.Zero(t, f.Dev.Stats().Memory.DeviceBytes())
	}, device.WithMemoryLimit(16*mib))
}

// DevicePtr on a buffer whose allocation the device has not run waits for it (not for the GPU), and
// then is the buffer's real address; it gives up with its context.
func TestMallocAsyncPtrWaits(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.Stream(t)
		const n = 256
		release := holdActor(t, f.Ctx, f.Dev, nil)
		b, _, err := alloc.MallocAsync[uint32](f.Ctx, s, n)
		require.NoError(t, err)
		short, cancel := context.WithTimeout(f.Ctx, 20*time.Millisecond)
		defer cancel()
		_, err = b.DevicePtr(short)
		require.ErrorIs(t, err, context.DeadlineExceeded, "the address cannot be known: the actor is held")
		ptrs := make(chan cuda.DevicePtr, 1)
		go func() {
			p, err := b.DevicePtr(f.Ctx)
			assert.NoError(t, err)
			ptrs <- p
		}()
		select {
		case p := <-ptrs:
			t.Fatalf("DevicePtr returned %#x before the allocation ran", uint64(p))
		case <-time.After(50 * time.Millisecond):
		}
		release()
		p := <-ptrs
		require.NotZero(t, p)
		q, err := b.DevicePtr(f.Ctx)
		require.NoError(t, err)
		require.Equal(t, p, q)
		// The address is the buffer's: a kernel given it by hand writes the buffer.
		testfix.Await(t, f.Ctx, s.Memset(f.Ctx, b, 0))
		testfix.Await(t, f.Ctx, s.Launch(f.Ctx, f.add, one(), p, uint32(9), int32(n)))
		out := make([]uint32, n)
		require.NoError(t, streams.CopyFromDevice(f.Ctx, b.Stream(), out, b).Wait(f.Ctx))
		for i, v := range out {
			require.Equal(t, uint32(9), v, "element %d", i)
		}
		require.NoError(t, b.Close(f.Ctx))
	})
}

// An allocation message the device refuses without running it (the device failed while the
// message waited) fails the future, the buffer's uses and its DevicePtr, and gives the charge back.
func TestMallocAsyncRefusedByFailedDevice(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		if f.Dev.Backend() == device.BackendCUDA {
			// The failure is the GPU's for the whole process: a made-up one would fail every
			// later test here. TestFaultKinds (device) fails a real GPU, in a child process.
			t.Skip("a sticky error fails the GPU for the rest of the process")
		}
		s := f.Stream(t)
		sticky := &cudaerr.Error{Op: "test", Code: cudaerr.IllegalAddress, Message: "made up by the test"}
		release := holdActor(t, f.Ctx, f.Dev, sticky)
		b, made, err := alloc.MallocAsync[uint32](f.Ctx, s, 64)
		require.NoError(t, err, "queued before the device failed")
		require.Equal(t, uint64(1), f.Dev.Stats().Memory.Async.Count)
		release()
		err = made.Wait(f.Ctx)
		require.ErrorIs(t, err, device.ErrDeviceFailed)
		_, err = b.DevicePtr(f.Ctx)
		require.ErrorIs(t, err, device.ErrAllocFailed)
		require.ErrorIs(t, err, device.ErrDeviceFailed)
		require.Zero(t, f.Dev.Stats().Memory.Async.Count, "the refused allocation's charge is given back")
		require.ErrorIs(t, b.Close(f.Ctx), device.ErrDeviceFailed)
		_, _, err = alloc.MallocAsync[uint32](f.Ctx, s, 64)
		require.ErrorIs(t, err, device.ErrDeviceFailed, "refused at once on a failed device")
	})
}

// Closing twice is device.ErrClosed, whichever call comes second; of many concurrent Closes of
// one buffer exactly one succeeds.
func TestFreeTwice(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.Stream(t)
		b, _, err := alloc.MallocAsync[uint32](f.Ctx, s, 16)
		require.NoError(t, err)
		require.NoError(t, b.Close(f.Ctx))
		require.ErrorIs(t, b.Close(f.Ctx), device.ErrClosed)
		err = b.CloseOn(f.Ctx, nil).Wait(f.Ctx)
		require.ErrorIs(t, err, device.ErrClosed)
		require.ErrorIs(t, b.Buffer.Close(f.Ctx), device.ErrClosed)

		c, _, err := alloc.MallocAsync[uint32](f.Ctx, s, 16)
		require.NoError(t, err)
		testfix.Await(t, f.Ctx, c.CloseOn(f.Ctx, nil))
		require.ErrorIs(t, c.Close(f.Ctx), device.ErrClosed)

		for _, malloc := range []func() (*alloc.Buffer[uint32], error){
			func() (*alloc.Buffer[uint32], error) {
				b, _, err := alloc.MallocAsync[uint32](f.Ctx, s, 16)
				return b, err
			},
			func() (*alloc.Buffer[uint32], error) { return alloc.Malloc[uint32](f.Ctx, s, 16) },
		} {
			b, err := malloc()
			require.NoError(t, err)
			const racers = 8
			var wg sync.WaitGroup
			results := make(chan error, racers)
			for range racers {
				wg.Go(func() { results <- b.Close(f.Ctx) })
			}
			wg.Wait()
			close(results)
			ok := 0
			for err := range results {
				if err == nil {
					ok++
					continue
				}
				require.ErrorIs(t, err, device.ErrClosed)
			}
			require.Equal(t, 1, ok)
			require.NoError(t, s.Synchronize(f.Ctx))
			require.True(t, b.Closed())
		}
		require.Zero(t, f.Dev.Stats().Memory.Async.Count)
		require.Zero(t, f.Dev.Stats().Memory.Device.Count)
		requireStreamUsable(t, f, s)
	})
}

// A ctx that ends before the allocation is queued: MallocAsync fails and nothing is allocated
// or counted. Once queued, the allocation does not depend on ctx.
func TestMallocAsyncCancelled(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.Stream(t)
		done, cancel := context.WithCancel(f.Ctx)
		cancel()
		b, made, err := alloc.MallocAsync[uint32](done, s, 64)
		require.ErrorIs(t, err, context.Canceled)
		require.Nil(t, b)
		require.Nil(t, made)
		require.Zero(t, f.Dev.Stats().Memory.Async.Count)

		// Waiting for room in a full mailbox, ctx ends: the same.
		release := holdActor(t, f.Ctx, f.Dev, nil)
		filler := core.Run(f.Ctx, (*core.Device)(f.Dev), func(backend.Device, *core.Tracker) (struct{}, error) { return struct{}{}, nil })
		short, cancelShort := context.WithTimeout(f.Ctx, 20*time.Millisecond)
		defer cancelShort()
		b, _, err = alloc.MallocAsync[uint32](short, s, 64)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.Nil(t, b)
		require.Zero(t, f.Dev.Stats().Memory.Async.Count)
		release()
		require.NoError(t, filler.Wait(f.Ctx))

		// Cancelled after MallocAsync returned: the buffer is made and the caller's.
		live, cancelLive := context.WithCancel(f.Ctx)
		b, made, err = alloc.MallocAsync[uint32](live, s, 64)
		require.NoError(t, err)
		cancelLive()
		testfix.Await(t, f.Ctx, made)
		require.NoError(t, streams.CopyToDevice(f.Ctx, b.Stream(), b, []uint32{7}).Wait(f.Ctx))
		out := []uint32{0}
		require.NoError(t, streams.CopyFromDevice(f.Ctx, b.Stream(), out, b).Wait(f.Ctx))
		require.Equal(t, uint32(7), out[0])
		require.NoError(t, b.Close(f.Ctx))
		require.Zero(t, f.Dev.Stats().Memory.Async.Count)
	}, device.WithActorTuning(device.ActorTuning{Mailbox: 1}))
}

// Close returns once the free is queued, without waiting for the device: a Malloc + Close pair
// costs one round trip to the actor. Uses queued after it are refused; the device runs it
// before anything queued after it.
func TestFreeDoesNotWait(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.Stream(t)
		for _, malloc := range []func() (*alloc.Buffer[uint32], error){
			func() (*alloc.Buffer[uint32], error) { return alloc.Malloc[uint32](f.Ctx, s, 1024) },
			func() (*alloc.Buffer[uint32], error) {
				b, _, err := alloc.MallocAsync[uint32](f.Ctx, s, 1024)
				return b, err
			},
		} {
			b, err := malloc()
			require.NoError(t, err)
			require.NoError(t, streams.CopyToDevice(f.Ctx, b.Stream(), b, []uint32{1, 2, 3}).Wait(f.Ctx))
			release := holdActor(t, f.Ctx, f.Dev, nil)
			// The actor stays held until release: a Close that waited for the device would
			// not return before the test's context ends.
			closed := make(chan error, 1)
			go func() { closed <- b.Close(f.Ctx) }()
			select {
			case err := <-closed:
				require.NoError(t, err)
			case <-f.Ctx.Done():
				t.Fatal("Close waited for the device")
			}
			require.False(t, b.Closed(), "the device has not run the free yet")
			require.Zero(t, f.Dev.Stats().Memory.DeviceBytes(), "a queued free is not counted")
			copied := s.Memset(f.Ctx, b, 0)
			release()
			err = copied.Wait(f.Ctx)
			require.ErrorIs(t, err, device.ErrClosed, "queued after the free")
			require.True(t, b.Closed())
		}
		requireStreamUsable(t, f, s)
	})
}

// The device's Close frees what is left, an allocation still queued when it is called
// included; a buffer's Close or CloseOn after it is ErrClosed.
func TestFreeAfterClose(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s, err := streams.New(f.Ctx, f.Dev)
		require.NoError(t, err)
		c, err := alloc.Malloc[uint32](f.Ctx, s, 64)
		require.NoError(t, err)
		release := holdActor(t, f.Ctx, f.Dev, nil)
		b, made, err := alloc.MallocAsync[uint32](f.Ctx, s, 64)
		require.NoError(t, err)
		closed := make(chan error, 1)
		go func() { closed <- f.Dev.Close() }()
		release()
		require.NoError(t, <-closed)
		require.NoError(t, made.Wait(f.Ctx), "queued before Close, the allocation was made")
		require.True(t, b.Closed(), "and freed by Close")
		require.True(t, c.Closed())
		require.Equal(t, device.Usage{}, f.Dev.Stats().Memory)
		for _, buf := range []*alloc.Buffer[uint32]{b, c} {
			require.ErrorIs(t, buf.Close(f.Ctx), device.ErrClosed)
			err = buf.CloseOn(f.Ctx, nil).Wait(f.Ctx)
			require.ErrorIs(t, err, device.ErrClosed)
		}
	})
}

// A buffer whose stream was closed is still freed, on the device's own stream once every
// stream's work is done; a free on another closed stream is refused and changes nothing.
func TestFreeAfterItsStreamClosed(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s, err := streams.New(f.Ctx, f.Dev)
		require.NoError(t, err)
		before := f.Dev.Stats().Memory
		b, _, err := alloc.MallocAsync[uint32](f.Ctx, s, 1024)
		require.NoError(t, err)
		c, err := alloc.Malloc[uint32](f.Ctx, s, 1024)
		require.NoError(t, err)
		gone, err := streams.New(f.Ctx, f.Dev)
		require.NoError(t, err)
		require.NoError(t, gone.Close(f.Ctx))
		require.NoError(t, s.Close(f.Ctx))

		err = b.CloseOn(f.Ctx, gone).Wait(f.Ctx)
		require.ErrorIs(t, err, device.ErrClosed, "a free on a closed stream is refused")
		require.False(t, b.Closed(), "and changes nothing")
		require.NoError(t, b.CloseOn(f.Ctx, nil).Wait(f.Ctx), "its own stream closed: freed on the device's")
		require.True(t, b.Closed())
		require.NoError(t, c.Close(f.Ctx))
		require.NoError(t, f.Dev.Synchronize(f.Ctx))
		require.True(t, c.Closed())
		require.Equal(t, before, f.Dev.Stats().Memory, "both freed, nothing counted")
		require.ErrorIs(t, b.Close(f.Ctx), device.ErrClosed, "closed twice")
	})
}
