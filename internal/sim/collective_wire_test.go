package sim

import (
	"bufio"
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// loopbackPair is both ends of one loopback TCP connection.
func loopbackPair(t *testing.T) (client, server net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
	}()
	client, err = net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	server, ok := <-accepted
	require.True(t, ok, "accept failed")
	t.Cleanup(func() { _ = client.Close(); _ = server.Close() })
	return client, server
}

// TestOutboxWriteFailureKeepsWhatThePeerSent has a peer say goodbye and close at once while
// the outbox writes to it: the outbox's failed write must not close the connection under its
// reader, which still reads the goodbye (else the root takes a clean leave for a drop).
func TestOutboxWriteFailureKeepsWhatThePeerSent(t *testing.T) {
	client, server := loopbackPair(t)
	_, err := client.Write(newMsg(msgBye).frame())
	require.NoError(t, err)
	require.NoError(t, client.Close())

	out := newOutbox(server)
	deadline := time.Now().Add(5 * time.Second)
	for failed := false; !failed; {
		require.True(t, time.Now().Before(deadline), "writes to a closed peer never failed")
		out.put(newMsg(msgGone))
		select {
		case <-out.done:
			failed = true
		case <-time.After(time.Millisecond):
		}
	}

	typ, _, err := readMsg(bufio.NewReader(server), maxFrame)
	require.NoError(t, err, "the peer's goodbye was lost with the failed write")
	assert.Equal(t, byte(msgBye), typ)
}

// TestOutboxCloseEndsItsSideAfterTheLastMessage: a closed outbox delivers every queued
// message, then the end, and leaves its connection open for reading the peer's reply.
func TestOutboxCloseEndsItsSideAfterTheLastMessage(t *testing.T) {
	client, server := loopbackPair(t)
	out := newOutbox(server)
	for range 3 {
		out.put(newMsg(msgGone))
	}
	out.close()
	out.put(newMsg(msgReady)) // after close: dropped
	<-out.done

	br := bufio.NewReader(client)
	for range 3 {
		typ, _, err := readMsg(br, maxFrame)
		require.NoError(t, err)
		assert.Equal(t, byte(msgGone), typ)
	}
	_, _, err := readMsg(br, maxFrame)
	assert.ErrorIs(t, err, io.EOF, "the end follows the last message")

	_, err = client.Write(newMsg(msgBye).frame())
	require.NoError(t, err)
	typ, _, err := readMsg(bufio.NewReader(server), maxFrame)
	require.NoError(t, err, "the closing side still reads")
	assert.Equal(t, byte(msgBye), typ)
}
