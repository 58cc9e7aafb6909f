package collective

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func testID() ID {
	var id ID
	for i := range id {
		id[i] = byte(i*7 + 3)
	}
	return id
}

func serve(t *testing.T, opts ...IDOption) *IDServer {
	t.Helper()
	s, err := ServeID(context.Background(), "127.0.0.1:0", testID(), opts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func timeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func TestFetchIDFromManyRanks(t *testing.T) {
	s := serve(t)
	var wg sync.WaitGroup
	ids := make([]ID, 8)
	errs := make([]error, 8)
	for i := range ids {
		wg.Go(func() { ids[i], errs[i] = FetchID(timeout(t, 10*time.Second), s.Addr()) })
	}
	wg.Wait()
	for i := range ids {
		require.NoError(t, errs[i])
		assert.Equal(t, testID(), ids[i])
	}
}

func TestFetchIDWaitsForTheServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	got := make(chan error, 1)
	var id ID
	go func() {
		var err error
		id, err = FetchID(timeout(t, 10*time.Second), addr)
		got <- err
	}()
	time.Sleep(100 * time.Millisecond) // the fetch has been refused at least once
	s, err := ServeID(context.Background(), addr, testID())
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, <-got)
	assert.Equal(t, testID(), id)
}

func TestFetchIDWithNoServerEndsWithTheContext(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	_, err = FetchID(timeout(t, 150*time.Millisecond), addr)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), addr)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = FetchID(ctx, addr)
	require.ErrorIs(t, err, context.Canceled)
}

func TestFetchIDRefusesGarbage(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_, _ = c.Write([]byte("HTTP/1.1 400 Bad Request\r\n\r\n"))
			_ = c.Close()
		}
	}()
	start := time.Now()
	_, err = FetchID(timeout(t, 10*time.Second), ln.Addr().String())
	require.ErrorIs(t, err, ErrNotIDServer)
	assert.Less(t, time.Since(start), 5*time.Second, "garbage ends the wait instead of being retried")
}

func TestIDServerRefusesGarbage(t *testing.T) {
	s := serve(t)
	c, err := net.Dial("tcp", s.Addr())
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.SetDeadline(time.Now().Add(10*time.Second)))
	hello := make([]byte, 8+1+idNonceLen)
	_, err = io.ReadFull(c, hello)
	require.NoError(t, err)
	_, err = c.Write(make([]byte, 8+1+idMACLen)) // no magic
	require.NoError(t, err)
	rest, err := io.ReadAll(c)
	require.NoError(t, err)
	assert.Empty(t, rest, "a stranger gets nothing")

	id, err := FetchID(timeout(t, 10*time.Second), s.Addr())
	require.NoError(t, err, "the server goes on serving")
	assert.Equal(t, testID(), id)
}

func TestIDToken(t *testing.T) {
	s := serve(t, WithIDToken([]byte("between the ranks")))
	_, err := FetchID(timeout(t, 10*time.Second), s.Addr())
	require.ErrorIs(t, err, ErrIDRefused, "no token")
	_, err = FetchID(timeout(t, 10*time.Second), s.Addr(), WithIDToken([]byte("guess")))
	require.ErrorIs(t, err, ErrIDRefused, "wrong token")
	id, err := FetchID(timeout(t, 10*time.Second), s.Addr(), WithIDToken([]byte("between the ranks")))
	require.NoError(t, err)
	assert.Equal(t, testID(), id)

	open := serve(t)
	_, err = FetchID(timeout(t, 10*time.Second), open.Addr(), WithIDToken([]byte("between the ranks")))
	require.ErrorIs(t, err, ErrIDRefused, "a server without the token is not trusted")
}

func TestIDServerStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	s, err := ServeID(ctx, "127.0.0.1:0", testID())
	require.NoError(t, err)
	addr := s.Addr()
	_, err = FetchID(timeout(t, 10*time.Second), addr)
	require.NoError(t, err)
	cancel()
	require.NoError(t, s.Close())
	require.NoError(t, s.Close(), "Close twice is fine")
	_, err = FetchID(timeout(t, 100*time.Millisecond), addr)
	require.ErrorIs(t, err, context.DeadlineExceeded, "nothing serves once the context is done")
}

func TestIDBadInput(t *testing.T) {
	_, err := ServeID(context.Background(), "nonsense", testID())
	require.Error(t, err)
	_, err = FetchID(timeout(t, 10*time.Second), "")
	require.Error(t, err)
	assert.False(t, errors.Is(err, context.DeadlineExceeded), "a malformed address fails at once")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = ServeID(ctx, "127.0.0.1:0", testID())
	require.ErrorIs(t, err, context.Canceled)
}
