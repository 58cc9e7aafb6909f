//go:build linux

package interop_test

import (
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/interop"
)

// socketPair is two connected stream Unix sockets, closed with the test.
func socketPair(t *testing.T) (a, b *net.UnixConn) {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	require.NoError(t, err)
	conn := func(fd int) *net.UnixConn {
		f := os.NewFile(uintptr(fd), "socketpair")
		defer f.Close()
		c, err := net.FileConn(f)
		require.NoError(t, err)
		t.Cleanup(func() { _ = c.Close() })
		return c.(*net.UnixConn)
	}
	return conn(fds[0]), conn(fds[1])
}

func TestSendHandleRoundTrip(t *testing.T) {
	a, b := socketPair(t)
	f := tempFile(t, "the shared contents")
	require.NoError(t, interop.SendHandle(a, f, []byte("payload one")))
	require.NoError(t, interop.SendHandle(a, nil, []byte("no descriptor")))
	require.NoError(t, interop.SendHandle(a, f, nil))
	require.NoError(t, f.Close()) // the receiver's descriptors are its own

	got, payload, err := interop.ReceiveHandle(b)
	require.NoError(t, err)
	require.NotNil(t, got)
	require.Equal(t, "payload one", string(payload))
	buf := make([]byte, 64)
	n, err := got.ReadAt(buf, 0)
	require.ErrorIs(t, err, io.EOF)
	require.Equal(t, "the shared contents", string(buf[:n]))
	require.NoError(t, got.Close())

	got, payload, err = interop.ReceiveHandle(b)
	require.NoError(t, err)
	require.Nil(t, got)
	require.Equal(t, "no descriptor", string(payload))

	got, payload, err = interop.ReceiveHandle(b)
	require.NoError(t, err)
	require.NotNil(t, got)
	require.Empty(t, payload)
	require.NoError(t, got.Close())
}

func TestReceiveHandleClosedBeforeMessage(t *testing.T) {
	a, b := socketPair(t)
	require.NoError(t, a.Close())
	f, _, err := interop.ReceiveHandle(b)
	require.Nil(t, f)
	require.ErrorIs(t, err, interop.ErrTransfer)
	require.ErrorIs(t, err, io.EOF)
}

func TestReceiveHandleClosedMidMessage(t *testing.T) {
	for name, cut := range map[string]int{"in the header": 5, "in the payload": 8 + 10} {
		t.Run(name, func(t *testing.T) {
			a, b := socketPair(t)
			full := []byte{'G', 'I', 1, 0, 0, 0, 0, 100} // one descriptor, 100 payload bytes
			full = append(full, make([]byte, 100)...)
			f := tempFile(t, "x")
			_, _, err := a.WriteMsgUnix(full[:cut], syscall.UnixRights(int(f.Fd())), nil)
			require.NoError(t, err)
			require.NoError(t, a.Close())
			got, _, err := interop.ReceiveHandle(b)
			require.Nil(t, got, "the descriptor of a cut message is closed, not returned")
			require.ErrorIs(t, err, interop.ErrTransfer)
			require.ErrorIs(t, err, io.ErrUnexpectedEOF)
		})
	}
}

func TestReceiveHandleGarbage(t *testing.T) {
	a, b := socketPair(t)
	_, err := a.Write([]byte("GET / HTTP/1.1\r\n\r\n"))
	require.NoError(t, err)
	_, _, err = interop.ReceiveHandle(b)
	require.ErrorIs(t, err, interop.ErrTransfer)
	require.Contains(t, err.Error(), "not a SendHandle message")

	// A header that promises a descriptor that never came.
	a, b = socketPair(t)
	_, err = a.Write([]byte{'G', 'I', 1, 0, 0, 0, 0, 0})
	require.NoError(t, err)
	_, _, err = interop.ReceiveHandle(b)
	require.ErrorIs(t, err, interop.ErrTransfer)
	require.Contains(t, err.Error(), "descriptors")

	// A payload past the limit is refused before it is read.
	a, b = socketPair(t)
	_, err = a.Write([]byte{'G', 'I', 0, 0, 0xff, 0xff, 0xff, 0xff})
	require.NoError(t, err)
	_, _, err = interop.ReceiveHandle(b)
	require.ErrorIs(t, err, interop.ErrTransfer)
}

func TestSendHandleBadInput(t *testing.T) {
	a, _ := socketPair(t)
	require.Error(t, interop.SendHandle(nil, nil, nil))
	_, _, err := interop.ReceiveHandle(nil)
	require.Error(t, err)
	require.Error(t, interop.SendHandle(a, nil, make([]byte, interop.MaxHandlePayload+1)))
	f := tempFile(t, "x")
	require.NoError(t, f.Close())
	require.Error(t, interop.SendHandle(a, f, nil), "a closed file has no descriptor to send")
	require.NoError(t, a.Close())
	err = interop.SendHandle(a, nil, []byte("x"))
	require.ErrorIs(t, err, interop.ErrTransfer)
	require.False(t, errors.Is(err, io.EOF))
}

func TestHandleMarshal(t *testing.T) {
	var h interop.MemHandle
	for i := range h {
		h[i] = byte(i)
	}
	b, err := h.MarshalBinary()
	require.NoError(t, err)
	var back interop.MemHandle
	require.NoError(t, back.UnmarshalBinary(b))
	require.Equal(t, h, back)
	require.Error(t, back.UnmarshalBinary(b[:63]))
	var e interop.EventHandle
	require.Error(t, e.UnmarshalBinary(make([]byte, 65)))
	var p interop.PoolPointer
	require.NoError(t, p.UnmarshalBinary(b))
	require.Equal(t, [64]byte(h), [64]byte(p))
}
