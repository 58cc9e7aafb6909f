//go:build linux && (amd64 || arm64)

package shmring

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

// echo receives on in and sends each message back on out until either ring is closed.
func echo(in, out *Ring) error {
	ctx := context.Background()
	var buf []byte
	for {
		var err error
		if buf, err = in.Recv(ctx, buf); err == nil {
			err = out.Send(ctx, buf)
		}
		if err != nil {
			if errors.Is(err, ErrClosed) {
				return nil
			}
			return err
		}
	}
}

// pingPong measures round trips of 64-byte messages: send on to, receive the echo on from.
func pingPong(b *testing.B, to, from *Ring) {
	ctx := context.Background()
	msg := make([]byte, 64)
	buf := make([]byte, 0, 64)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := to.Send(ctx, msg); err != nil {
			b.Fatal(err)
		}
		var err error
		if buf, err = from.Recv(ctx, buf); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRoundTrip is a 64-byte message's round trip between two goroutines of this process
// over two rings, each goroutine using its own mapping as another process would.
func BenchmarkRoundTrip(b *testing.B) {
	to, toPeer := pair(b, 64<<10)
	from, fromPeer := pair(b, 64<<10)
	done := make(chan error, 1)
	go func() { done <- echo(toPeer, fromPeer) }()
	pingPong(b, to, from)
	b.StopTimer()
	require.NoError(b, to.Close())
	require.NoError(b, <-done)
}

// BenchmarkRoundTripChan is the same round trip over unbuffered Go channels, for comparison.
func BenchmarkRoundTripChan(b *testing.B) {
	to, from := make(chan []byte), make(chan []byte)
	go func() {
		for m := range to {
			from <- append([]byte(nil), m...)
		}
	}()
	defer close(to)
	msg := make([]byte, 64)
	for b.Loop() {
		to <- msg
		<-from
	}
}

// BenchmarkRoundTripProcess is a 64-byte message's round trip to a child process that echoes.
func BenchmarkRoundTripProcess(b *testing.B) {
	c := startChild(b, 64<<10)
	pingPong(b, c.to, c.from)
}

// BenchmarkThroughput streams 4 KiB messages from one goroutine to another through a 1 MiB
// ring, each on its own mapping.
func BenchmarkThroughput(b *testing.B) {
	prod, cons := pair(b, 1<<20)
	msg := make([]byte, 4<<10)
	b.SetBytes(int64(len(msg)))
	ctx := context.Background()
	sent := make(chan error, 1)
	b.ResetTimer()
	go func() {
		for range b.N {
			if err := prod.Send(ctx, msg); err != nil {
				sent <- err
				return
			}
		}
		sent <- nil
	}()
	buf := make([]byte, 0, len(msg))
	for range b.N {
		var err error
		if buf, err = cons.Recv(ctx, buf); err != nil {
			b.Fatal(err)
		}
	}
	require.NoError(b, <-sent)
}

// BenchmarkThroughputProcess streams 4 KiB messages to a child process and back (each message
// crosses twice; the bytes counted are one way).
func BenchmarkThroughputProcess(b *testing.B) {
	c := startChild(b, 1<<20)
	msg := make([]byte, 4<<10)
	b.SetBytes(int64(len(msg)))
	ctx := context.Background()
	sent := make(chan error, 1)
	b.ResetTimer()
	go func() {
		for range b.N {
			if err := c.to.Send(ctx, msg); err != nil {
				sent <- err
				return
			}
		}
		sent <- nil
	}()
	buf := make([]byte, 0, len(msg))
	for range b.N {
		var err error
		if buf, err = c.from.Recv(ctx, buf); err != nil {
			b.Fatal(err)
		}
	}
	require.NoError(b, <-sent)
}
