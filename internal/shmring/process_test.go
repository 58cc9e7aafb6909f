//go:build linux && (amd64 || arm64)

package shmring

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// childEnv names the role of a re-executed test binary: see TestRingChild.
const childEnv = "GPUACTOR_SHMRING_CHILD"

// TestRingChild is not a test of its own: it is the child process of the cross-process tests
// and benchmarks, which re-execute the test binary with childEnv set. Role "echo": it maps
// the ring on fd 3 (parent to child) and the one on fd 4 (child to parent), and sends every
// message it receives back, until either ring is closed.
func TestRingChild(t *testing.T) {
	role := os.Getenv(childEnv)
	if role == "" {
		t.Skip("the child process of the cross-process tests, run by them")
	}
	require.Equal(t, "echo", role)
	in, err := Open(os.NewFile(3, "in"))
	require.NoError(t, err)
	out, err := Open(os.NewFile(4, "out"))
	require.NoError(t, err)
	defer func() { _ = in.Close(); _ = out.Close() }()
	ctx := context.Background()
	var buf []byte
	for {
		buf, err = in.Recv(ctx, buf)
		if err == nil {
			err = out.Send(ctx, buf)
		}
		if errors.Is(err, ErrClosed) {
			return
		}
		require.NoError(t, err)
	}
}

// child is a running echo process and the parent's ends of its two rings.
type child struct {
	cmd     *exec.Cmd
	to      *Ring         // the parent sends
	from    *Ring         // the parent receives
	exited  chan struct{} // closed once the child has exited
	exitErr error         // cmd.Wait's result, once exited is closed
}

func startChild(t testing.TB, size int) *child {
	t.Helper()
	to, err := New(size)
	require.NoError(t, err)
	from, err := New(size)
	require.NoError(t, err)
	cmd := exec.Command(os.Args[0], "-test.run=^TestRingChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"=echo")
	cmd.ExtraFiles = []*os.File{to.File(), from.File()}
	var out bytes.Buffer // read only after the child has exited
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	c := &child{cmd: cmd, to: to, from: from, exited: make(chan struct{})}
	go func() {
		c.exitErr = cmd.Wait()
		close(c.exited)
	}()
	t.Cleanup(func() {
		_ = to.Close()
		_ = from.Close()
		select {
		case <-c.exited:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-c.exited
			t.Error("the child process did not exit after its rings were closed")
		}
		if t.Failed() {
			t.Logf("child process: %v; its output:\n%s", c.exitErr, out.String())
		}
	})
	return c
}

// TestProcessEcho streams random-sized messages (zero bytes up to the largest) to a real
// second process and back, pipelined, checking every byte, then closes the rings and checks
// the child saw the close and exited cleanly.
func TestProcessEcho(t *testing.T) {
	c := startChild(t, 16<<10)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const count = 5000
	msgs := make([][]byte, count)
	for i := range msgs {
		n := rand.IntN(2000)
		switch i % 50 {
		case 0:
			n = c.to.Size() - recordHeader
		case 1:
			n = 0
		}
		msgs[i] = make([]byte, n)
		for j := range msgs[i] {
			msgs[i][j] = byte(rand.Uint32())
		}
	}
	sendErr := make(chan error, 1)
	go func() {
		for _, m := range msgs {
			if err := c.to.Send(ctx, m); err != nil {
				sendErr <- err
				return
			}
		}
		sendErr <- nil
	}()
	var buf []byte
	for i, want := range msgs {
		var err error
		buf, err = c.from.Recv(ctx, buf)
		require.NoError(t, err, "message %d", i)
		require.Equal(t, want, buf, "message %d", i)
	}
	require.NoError(t, <-sendErr)

	// Closing the ring the child reads wakes its Recv (asleep by now) with ErrClosed.
	time.Sleep(5 * time.Millisecond)
	require.NoError(t, c.to.Close())
	select {
	case <-c.exited:
		require.NoError(t, c.exitErr, "the child's exit")
	case <-time.After(5 * time.Second):
		t.Fatal("the child did not see the close")
	}
	// And the child closed the ring it wrote, as it left.
	_, err := c.from.Recv(ctx, nil)
	assert.ErrorIs(t, err, ErrClosed)
}

// TestProcessKilled kills the child with SIGKILL mid-stream: the parent's Recv returns on its
// context's deadline rather than hanging, a blocked Send likewise, and once the parent closes
// the rings (as the supervisor does when it sees the child die) every blocked call returns
// ErrClosed promptly.
func TestProcessKilled(t *testing.T) {
	c := startChild(t, MinSize)
	longSleeps(c.to, c.from)
	ctx := context.Background()
	var wg sync.WaitGroup
	sendErr := make(chan error, 1)
	wg.Go(func() {
		msg := make([]byte, 500)
		for {
			if err := c.to.Send(ctx, msg); err != nil {
				sendErr <- err
				return
			}
		}
	})
	var buf []byte
	for range 200 { // the stream is flowing
		var err error
		buf, err = c.from.Recv(ctx, buf)
		require.NoError(t, err)
	}
	require.NoError(t, c.cmd.Process.Signal(syscall.SIGKILL))
	select {
	case <-c.exited:
		require.Error(t, c.exitErr)
	case <-time.After(5 * time.Second):
		t.Fatal("the child did not die")
	}

	// What the child echoed before it died is still there; then Recv waits, until its deadline.
	start := time.Now()
	var err error
	for err == nil {
		short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		buf, err = c.from.Recv(short, buf)
		cancel()
		require.Less(t, time.Since(start), 5*time.Second, "Recv keeps returning messages from a dead child")
	}
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	assert.ErrorIs(t, c.to.Send(short, make([]byte, MinSize-recordHeader)), context.DeadlineExceeded,
		"Send to a dead child's full ring ends on the deadline")

	// A Recv without a deadline returns once the parent closes the ring.
	recvErr := make(chan error, 1)
	go func() { _, err := c.from.Recv(ctx, nil); recvErr <- err }()
	time.Sleep(5 * time.Millisecond)
	closed := time.Now()
	require.NoError(t, c.from.Close())
	require.NoError(t, c.to.Close())
	for _, ch := range []chan error{recvErr, sendErr} {
		select {
		case err := <-ch:
			assert.ErrorIs(t, err, ErrClosed)
		case <-time.After(5 * time.Second):
			t.Fatal("a blocked call did not return after Close")
		}
	}
	assert.Less(t, time.Since(closed), wakeBound, "woken by Close")
	wg.Wait()
}
