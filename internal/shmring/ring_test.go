//go:build linux && (amd64 || arm64)

package shmring

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pair makes a ring and maps it a second time from its file, as the other process would: the
// producer sends on one mapping and the consumer receives on the other.
func pair(t testing.TB, size int) (prod, cons *Ring) {
	t.Helper()
	prod, err := New(size)
	require.NoError(t, err)
	cons, err = Open(prod.File())
	require.NoError(t, err)
	t.Cleanup(func() {
		assert.NoError(t, prod.Close())
		assert.NoError(t, cons.Close())
	})
	return prod, cons
}

// longSleeps makes every futex sleep of rs last up to a second, so a test that sees a waiter
// return within wakeBound knows it was woken, not timed out.
func longSleeps(rs ...*Ring) {
	for _, r := range rs {
		r.slice = time.Second
	}
}

const wakeBound = 300 * time.Millisecond

func TestNewRoundsSize(t *testing.T) {
	for _, c := range []struct{ ask, want int }{{0, MinSize}, {1, MinSize}, {MinSize, MinSize}, {MinSize + 1, 2 * MinSize}, {100 << 10, 128 << 10}} {
		r, err := New(c.ask)
		require.NoError(t, err)
		assert.Equal(t, c.want, r.Size(), "New(%d)", c.ask)
		require.NoError(t, r.Close())
	}
	_, err := New(-1)
	assert.ErrorContains(t, err, "size -1 out of range")
	_, err = New(MaxSize + 1)
	assert.ErrorContains(t, err, "out of range")
}

func TestSendRecvSecondMapping(t *testing.T) {
	prod, cons := pair(t, 0)
	ctx := context.Background()
	require.NoError(t, prod.Send(ctx, []byte("hello")))
	require.NoError(t, prod.Send(ctx, nil))
	require.NoError(t, prod.Send(ctx, []byte("world!!!")))
	got, err := cons.Recv(ctx, nil)
	require.NoError(t, err)
	assert.Equal(t, "hello", string(got))
	got, err = cons.Recv(ctx, got)
	require.NoError(t, err)
	assert.Empty(t, got, "zero-length message")
	buf := make([]byte, 0, 64)
	got, err = cons.Recv(ctx, buf)
	require.NoError(t, err)
	assert.Equal(t, "world!!!", string(got))
	assert.Same(t, &buf[:1][0], &got[0], "Recv reuses a large enough buf")
}

// TestWrapAround streams many random-sized messages, of zero bytes up to the largest that
// fits, through a small ring from one goroutine to another, and checks each byte for byte.
func TestWrapAround(t *testing.T) {
	for _, spin := range []time.Duration{DefaultSpin, 0} {
		t.Run(spin.String(), func(t *testing.T) {
			prod, cons := pair(t, MinSize)
			prod.SetSpin(spin)
			cons.SetSpin(spin)
			const count = 20000
			seed := rand.Uint64()
			msgAt := func(rng *rand.Rand, i int) []byte {
				n := rng.IntN(300)
				switch i % 97 {
				case 0:
					n = prod.Size() - recordHeader // the largest message
				case 1:
					n = 0
				}
				m := make([]byte, n)
				for j := range m {
					m[j] = byte(rng.Uint32())
				}
				return m
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			errc := make(chan error, 1)
			go func() {
				rng := rand.New(rand.NewPCG(seed, 1))
				for i := range count {
					if err := prod.Send(ctx, msgAt(rng, i)); err != nil {
						errc <- err
						return
					}
				}
				errc <- nil
			}()
			rng := rand.New(rand.NewPCG(seed, 1))
			var buf []byte
			for i := range count {
				var err error
				buf, err = cons.Recv(ctx, buf)
				require.NoError(t, err, "message %d", i)
				want := msgAt(rng, i)
				if !assert.Equal(t, want, buf, "message %d (seed %d)", i, seed) {
					break
				}
			}
			require.NoError(t, <-errc)
		})
	}
}

func TestTooLarge(t *testing.T) {
	prod, cons := pair(t, MinSize)
	ctx := context.Background()
	err := prod.Send(ctx, make([]byte, MinSize-recordHeader+1))
	require.ErrorIs(t, err, ErrTooLarge)
	assert.ErrorContains(t, err, "4089 bytes")
	assert.ErrorIs(t, prod.Send(ctx, make([]byte, 2*MinSize)), ErrTooLarge)
	// The ring is still usable, and the largest message fits.
	big := make([]byte, MinSize-recordHeader)
	big[len(big)-1] = 7
	require.NoError(t, prod.Send(ctx, big))
	got, err := cons.Recv(ctx, nil)
	require.NoError(t, err)
	assert.Equal(t, big, got)
}

// TestFullRingBlocks fills the ring, checks that the next Send waits, and that it completes
// once the consumer takes a message.
func TestFullRingBlocks(t *testing.T) {
	for _, spin := range []time.Duration{DefaultSpin, 0} {
		t.Run(spin.String(), func(t *testing.T) {
			prod, cons := pair(t, MinSize)
			prod.SetSpin(spin)
			ctx := context.Background()
			msg := make([]byte, 1016) // 1 KiB records: four fill the ring
			for i := range 4 {
				msg[0] = byte(i)
				require.NoError(t, prod.Send(ctx, msg))
			}
			short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
			defer cancel()
			assert.ErrorIs(t, prod.Send(short, msg), context.DeadlineExceeded, "the ring is full")

			sent := make(chan error, 1)
			go func() {
				msg := make([]byte, 1016)
				msg[0] = 4
				sent <- prod.Send(ctx, msg)
			}()
			select {
			case err := <-sent:
				t.Fatalf("Send into a full ring returned %v", err)
			case <-time.After(30 * time.Millisecond): // long enough to have gone to sleep
			}
			got, err := cons.Recv(ctx, nil)
			require.NoError(t, err)
			assert.Equal(t, byte(0), got[0])
			select {
			case err := <-sent:
				require.NoError(t, err)
			case <-time.After(time.Second):
				t.Fatal("Send did not complete after the consumer made room")
			}
			for i := 1; i <= 4; i++ {
				got, err := cons.Recv(ctx, got)
				require.NoError(t, err)
				assert.Equal(t, byte(i), got[0])
			}
		})
	}
}

// TestRecvWakesFromSleep checks a Recv that went to sleep on the futex is woken by a Send
// well before its sleep slice would end by itself.
func TestRecvWakesFromSleep(t *testing.T) {
	prod, cons := pair(t, 0)
	longSleeps(prod, cons)
	ctx := context.Background()
	for range 20 {
		got := make(chan time.Time, 1)
		go func() {
			_, err := cons.Recv(ctx, nil)
			assert.NoError(t, err)
			got <- time.Now()
		}()
		time.Sleep(2 * time.Millisecond) // past the spin window: the consumer sleeps
		sent := time.Now()
		require.NoError(t, prod.Send(ctx, []byte("x")))
		assert.Less(t, (<-got).Sub(sent), wakeBound, "woken by the send, not by its own timeout")
	}
}

func TestCancelWhileBlocked(t *testing.T) {
	for _, side := range []string{"send", "recv"} {
		t.Run(side, func(t *testing.T) {
			prod, cons := pair(t, MinSize)
			longSleeps(prod, cons)
			call := func(ctx context.Context) error { _, err := cons.Recv(ctx, nil); return err }
			if side == "send" {
				require.NoError(t, prod.Send(context.Background(), make([]byte, MinSize-recordHeader)))
				call = func(ctx context.Context) error { return prod.Send(ctx, []byte("x")) }
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- call(ctx) }()
			time.Sleep(5 * time.Millisecond) // past the spin window: asleep on the futex
			cancelled := time.Now()
			cancel()
			select {
			case err := <-done:
				assert.ErrorIs(t, err, context.Canceled)
				assert.Less(t, time.Since(cancelled), wakeBound, "woken by the cancellation")
			case <-time.After(time.Second):
				t.Fatal("blocked call ignored its context's cancellation")
			}

			// A deadline ends a wait on time too, and the ring stays usable.
			dctx, dcancel := context.WithTimeout(context.Background(), time.Millisecond)
			defer dcancel()
			start := time.Now()
			assert.ErrorIs(t, call(dctx), context.DeadlineExceeded)
			assert.Less(t, time.Since(start), wakeBound)
			if side == "send" {
				_, err := cons.Recv(context.Background(), nil)
				require.NoError(t, err)
			}
			require.NoError(t, prod.Send(context.Background(), []byte("after")))
			got, err := cons.Recv(context.Background(), nil)
			require.NoError(t, err)
			assert.Equal(t, "after", string(got))
		})
	}
}

// TestCloseWakesBlocked closes each side while the other side's producer or consumer is
// blocked, and while this side's own calls are blocked.
func TestCloseWakesBlocked(t *testing.T) {
	for _, closer := range []string{"producer", "consumer"} {
		t.Run(closer, func(t *testing.T) {
			prod, err := New(MinSize)
			require.NoError(t, err)
			cons, err := Open(prod.File())
			require.NoError(t, err)
			defer func() { _ = prod.Close(); _ = cons.Close() }()
			// A second ring, full, so that a Send blocks on it, in the same pair of mappings'
			// roles: prod2 sends, cons2 is never read.
			prod2, err := New(MinSize)
			require.NoError(t, err)
			cons2, err := Open(prod2.File())
			require.NoError(t, err)
			defer func() { _ = prod2.Close(); _ = cons2.Close() }()
			longSleeps(prod, cons, prod2, cons2)
			ctx := context.Background()
			require.NoError(t, prod2.Send(ctx, make([]byte, MinSize-recordHeader)))

			recvErr := make(chan error, 1)
			sendErr := make(chan error, 1)
			go func() { _, err := cons.Recv(ctx, nil); recvErr <- err }()
			go func() { sendErr <- prod2.Send(ctx, []byte("x")) }()
			time.Sleep(5 * time.Millisecond) // both asleep on their futexes
			start := time.Now()
			if closer == "producer" {
				require.NoError(t, prod.Close())  // the blocked Recv is the peer's
				require.NoError(t, prod2.Close()) // the blocked Send is this side's own
			} else {
				require.NoError(t, cons.Close())  // the blocked Recv is this side's own
				require.NoError(t, cons2.Close()) // the blocked Send is the peer's
			}
			for _, c := range []chan error{recvErr, sendErr} {
				select {
				case err := <-c:
					assert.ErrorIs(t, err, ErrClosed)
				case <-time.After(time.Second):
					t.Fatal("Close did not wake a blocked call")
				}
			}
			assert.Less(t, time.Since(start), wakeBound, "woken by Close, not by a timeout")
		})
	}
}

func TestUseAfterClose(t *testing.T) {
	prod, cons := pair(t, 0)
	ctx := context.Background()
	require.NoError(t, prod.Send(ctx, []byte("one")))
	require.NoError(t, prod.Send(ctx, []byte("two")))
	require.NoError(t, prod.Close())
	require.NoError(t, prod.Close(), "idempotent")
	assert.ErrorIs(t, prod.Send(ctx, []byte("x")), ErrClosed)
	_, err := prod.Recv(ctx, nil)
	assert.ErrorIs(t, err, ErrClosed)

	// The peer's consumer still gets what was sent before the close, then ErrClosed; its own
	// Send (on the same ring) is refused.
	assert.ErrorIs(t, cons.Send(ctx, []byte("x")), ErrClosed)
	for _, want := range []string{"one", "two"} {
		got, err := cons.Recv(ctx, nil)
		require.NoError(t, err)
		assert.Equal(t, want, string(got))
	}
	_, err = cons.Recv(ctx, nil)
	assert.ErrorIs(t, err, ErrClosed)
	require.NoError(t, cons.Close())
	_, err = cons.Recv(ctx, nil)
	assert.ErrorIs(t, err, ErrClosed)
}

// TestConcurrentCallsAndClose has several goroutines of each side sending and receiving while
// one side closes: every call returns, none touches the unmapped memory (a fault would crash
// the test), and every message received is one that was sent, whole.
func TestConcurrentCallsAndClose(t *testing.T) {
	for range 20 {
		prod, err := New(MinSize)
		require.NoError(t, err)
		cons, err := Open(prod.File())
		require.NoError(t, err)
		ctx := context.Background()
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Go(func() {
				msg := make([]byte, 64+g)
				for i := range msg {
					msg[i] = byte(g)
				}
				for prod.Send(ctx, msg) == nil {
				}
			})
			wg.Go(func() {
				var buf []byte
				for {
					var err error
					buf, err = cons.Recv(ctx, buf)
					if err != nil {
						assert.ErrorIs(t, err, ErrClosed)
						return
					}
					g := len(buf) - 64
					require.True(t, g >= 0 && g < 4, "length %d", len(buf))
					for _, b := range buf {
						require.Equal(t, byte(g), b)
					}
				}
			})
		}
		time.Sleep(time.Duration(rand.IntN(3000)) * time.Microsecond)
		closer, other := prod, cons
		if rand.IntN(2) == 0 {
			closer, other = cons, prod
		}
		require.NoError(t, closer.Close())
		wg.Wait()
		require.NoError(t, other.Close())
	}
}

func TestOpenRejects(t *testing.T) {
	_, err := Open(nil)
	assert.ErrorIs(t, err, ErrNotRing)

	plain, err := os.CreateTemp(t.TempDir(), "notring")
	require.NoError(t, err)
	defer plain.Close()
	require.NoError(t, plain.Truncate(headerSize+MinSize))
	_, err = Open(plain)
	assert.ErrorIs(t, err, ErrNotRing, "a plain file has no seals")

	small, err := os.CreateTemp(t.TempDir(), "small")
	require.NoError(t, err)
	defer small.Close()
	_, err = Open(small)
	assert.ErrorIs(t, err, ErrNotRing)
	assert.ErrorContains(t, err, "0 bytes")

	// A sealed memfd of the right size whose header is not a ring's.
	f, err := Memfd("other", headerSize+MinSize)
	require.NoError(t, err)
	defer f.Close()
	_, err = Open(f)
	assert.ErrorIs(t, err, ErrNotRing)
	assert.ErrorContains(t, err, "header magic 0x0")
}

// TestOpenOwnsItsFile checks Open duplicates the file: the caller closing its copy does not
// affect the ring, and the ring's Close does not close the caller's.
func TestOpenOwnsItsFile(t *testing.T) {
	prod, err := New(0)
	require.NoError(t, err)
	defer prod.Close()
	dup, err := dupFile(prod.File())
	require.NoError(t, err)
	cons, err := Open(dup)
	require.NoError(t, err)
	require.NoError(t, dup.Close())
	assert.NotEqual(t, dup.Fd(), cons.File().Fd())
	require.NoError(t, prod.Send(context.Background(), []byte("still here")))
	got, err := cons.Recv(context.Background(), nil)
	require.NoError(t, err)
	assert.Equal(t, "still here", string(got))
	require.NoError(t, cons.Close())
	_, err = prod.File().Stat()
	assert.NoError(t, err, "the creator's file stays open")
}

func TestCorruptRecord(t *testing.T) {
	prod, cons := pair(t, MinSize)
	ctx := context.Background()
	require.NoError(t, prod.Send(ctx, []byte("ok")))
	// A misbehaving producer: a record header claiming more bytes than were published.
	*(*uint64)(unsafe.Pointer(&prod.data[recordSize(2)])) = 1000
	prod.sh.tail.Add(recordSize(0))
	got, err := cons.Recv(ctx, nil)
	require.NoError(t, err)
	assert.Equal(t, "ok", string(got))
	_, err = cons.Recv(ctx, nil)
	assert.ErrorIs(t, err, ErrCorrupt)
	assert.ErrorContains(t, err, "record of 1000 bytes")
	assert.False(t, errors.Is(err, ErrClosed))
}

// A ring that spins without yielding still ends its spin at the window, then sleeps and is
// woken by the send; while it spins, messages sent meanwhile arrive in order.
func TestSpinWithoutYield(t *testing.T) {
	prod, cons := pair(t, 0)
	longSleeps(prod, cons)
	cons.SetYield(false)
	cons.SetSpin(time.Millisecond)
	ctx := context.Background()
	for i := range 10 {
		got := make(chan time.Time, 1)
		go func() {
			msg, err := cons.Recv(ctx, nil)
			assert.NoError(t, err)
			assert.Equal(t, []byte{byte(i)}, msg)
			got <- time.Now()
		}()
		if i%2 == 0 {
			time.Sleep(5 * time.Millisecond) // past the window: the consumer sleeps
		}
		sent := time.Now()
		require.NoError(t, prod.Send(ctx, []byte{byte(i)}))
		assert.Less(t, (<-got).Sub(sent), wakeBound, "message %d", i)
	}
}

// An idle function runs while a receiver spins, and keeps it spinning while it reports work
// in hand; once it reports none the receiver sleeps as usual and is woken by the send.
func TestIdleRunsWhileSpinning(t *testing.T) {
	if !multiCPU {
		t.Skip("a ring never spins on one CPU")
	}
	prod, cons := pair(t, 0)
	longSleeps(prod, cons)
	cons.SetSpin(100 * time.Microsecond)
	var calls atomic.Int64
	var busy atomic.Bool
	busy.Store(true)
	cons.SetIdle(func() bool {
		calls.Add(1)
		return busy.Load()
	})
	got := make(chan struct{})
	go func() {
		_, err := cons.Recv(context.Background(), nil)
		assert.NoError(t, err)
		close(got)
	}()
	// Polled, not slept: a loaded CI host may run the receiver late, and while busy is set it
	// must go on calling idle however long it takes to get there.
	require.Eventually(t, func() bool { return calls.Load() > 0 }, 5*time.Second, time.Millisecond,
		"idle ran while the receiver waited")
	n := calls.Load()
	require.Eventually(t, func() bool { return calls.Load() > n+10 }, 5*time.Second, time.Millisecond,
		"still spinning: the idle function has work in hand")
	busy.Store(false)
	// The consumer's sleeper count says it is on the futex: a clock would mistake a receiver
	// descheduled on a loaded host for one asleep.
	require.Eventually(t, func() bool { return cons.sh.dataSleepers.Load() != 0 }, 5*time.Second, time.Millisecond,
		"asleep once idle reports no work")
	n = calls.Load()
	time.Sleep(20 * time.Millisecond)
	assert.Equal(t, n, calls.Load(), "asleep: idle no longer runs")
	require.NoError(t, prod.Send(context.Background(), []byte("x")))
	select {
	case <-got:
	case <-time.After(wakeBound):
		t.Fatal("not woken by the send")
	}
	cons.SetIdle(nil)
}
