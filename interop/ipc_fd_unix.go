//go:build unix

package interop

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"

	"github.com/gpuactor/gpuactor/internal/core"
)

// A message is a header — "GI", the number of descriptors (0 or 1), a zero byte, the payload's
// length (uint32, big-endian) — then the payload. The descriptor rides, as SCM_RIGHTS
// ancillary data, with the message's first byte, which the first read of a stream socket
// returns with it.
const ipcHeaderSize = 8

// SendHandle sends f's descriptor (nil: none) and payload (say, a PoolPointer and a size) as
// one message over conn, a stream Unix socket ("unix"), for ReceiveHandle in the process at
// the other end; it returns once the message is written. f stays open here: the receiver gets
// a descriptor of its own, so close f whenever suits.
func SendHandle(conn *net.UnixConn, f *os.File, payload []byte) error {
	if conn == nil {
		return core.Invalid("SendHandle on a nil connection")
	}
	if len(payload) > MaxHandlePayload {
		return core.Invalid("SendHandle payload of %d bytes: at most %d", len(payload), MaxHandlePayload)
	}
	msg := make([]byte, ipcHeaderSize+len(payload))
	msg[0], msg[1] = 'G', 'I'
	binary.BigEndian.PutUint32(msg[4:], uint32(len(payload)))
	copy(msg[ipcHeaderSize:], payload)
	var oob []byte
	if f != nil {
		raw, err := f.SyscallConn()
		if err != nil {
			return core.Invalid("SendHandle of a file without a descriptor: %v", err)
		}
		msg[2] = 1
		var werr error
		cerr := raw.Control(func(fd uintptr) {
			oob = syscall.UnixRights(int(fd))
			werr = ipcSendAll(conn, msg, oob)
		})
		if cerr != nil {
			return core.Invalid("SendHandle of a closed file: %v", cerr)
		}
		return werr
	}
	return ipcSendAll(conn, msg, nil)
}

// ipcSendAll writes msg, oob with its first part.
func ipcSendAll(conn *net.UnixConn, msg, oob []byte) error {
	n, _, err := conn.WriteMsgUnix(msg, oob, nil)
	if err != nil {
		return fmt.Errorf("%w: sending %d bytes: %w", ErrTransfer, len(msg), err)
	}
	if n < len(msg) {
		if _, err := conn.Write(msg[n:]); err != nil {
			return fmt.Errorf("%w: sent %d of %d bytes: %w", ErrTransfer, n, len(msg), err)
		}
	}
	return nil
}

// ReceiveHandle reads one message SendHandle wrote to the other end of conn and returns its
// descriptor as a file (nil when none was sent), close-on-exec, which the caller owns, and its
// payload. A socket that closes before or during the message, or bytes that are not such a
// message, are an ErrTransfer error (io.EOF as well when it closed before the message began);
// a descriptor received with a bad message is closed.
func ReceiveHandle(conn *net.UnixConn) (*os.File, []byte, error) {
	if conn == nil {
		return nil, nil, core.Invalid("ReceiveHandle on a nil connection")
	}
	var hdr [ipcHeaderSize]byte
	oob := make([]byte, syscall.CmsgSpace(4*4)) // room for a few descriptors, to close extras
	n, oobn, flags, _, err := conn.ReadMsgUnix(hdr[:], oob)
	f, ferr := ipcTakeRights(oob[:oobn])
	fail := func(err error) (*os.File, []byte, error) {
		if f != nil {
			_ = f.Close()
		}
		return nil, nil, err
	}
	if err != nil {
		if n == 0 && errors.Is(err, io.EOF) {
			return fail(fmt.Errorf("%w: the connection closed before a message: %w", ErrTransfer, io.EOF))
		}
		return fail(fmt.Errorf("%w: reading a message: %w", ErrTransfer, err))
	}
	if n == 0 {
		return fail(fmt.Errorf("%w: the connection closed before a message: %w", ErrTransfer, io.EOF))
	}
	if ferr != nil {
		return fail(ferr)
	}
	if flags&syscall.MSG_CTRUNC != 0 {
		return fail(fmt.Errorf("%w: the descriptors sent did not fit (more than SendHandle sends)", ErrTransfer))
	}
	if _, err := io.ReadFull(conn, hdr[n:]); err != nil {
		return fail(fmt.Errorf("%w: the connection closed after %d of the header's %d bytes: %w", ErrTransfer, n, ipcHeaderSize, ipcMidMessage(err)))
	}
	if hdr[0] != 'G' || hdr[1] != 'I' || hdr[2] > 1 || hdr[3] != 0 {
		return fail(fmt.Errorf("%w: not a SendHandle message (header % x)", ErrTransfer, hdr))
	}
	if want := hdr[2] == 1; want != (f != nil) {
		return fail(fmt.Errorf("%w: the message says %d descriptors, %d came with it", ErrTransfer, hdr[2], ipcBoolInt(f != nil)))
	}
	size := binary.BigEndian.Uint32(hdr[4:])
	if size > MaxHandlePayload {
		return fail(fmt.Errorf("%w: payload of %d bytes announced, at most %d", ErrTransfer, size, MaxHandlePayload))
	}
	payload := make([]byte, size)
	if got, err := io.ReadFull(conn, payload); err != nil {
		return fail(fmt.Errorf("%w: the connection closed after %d of the payload's %d bytes: %w", ErrTransfer, got, size, ipcMidMessage(err)))
	}
	return f, payload, nil
}

// ipcTakeRights turns the descriptors of an SCM_RIGHTS message into a file: one is expected, any
// more are closed and refused.
func ipcTakeRights(oob []byte) (*os.File, error) {
	if len(oob) == 0 {
		return nil, nil
	}
	msgs, err := syscall.ParseSocketControlMessage(oob)
	if err != nil {
		return nil, fmt.Errorf("%w: unreadable ancillary data: %w", ErrTransfer, err)
	}
	var fds []int
	for i := range msgs {
		got, err := syscall.ParseUnixRights(&msgs[i])
		if err != nil {
			continue // not SCM_RIGHTS (credentials, say): nothing to keep
		}
		fds = append(fds, got...)
	}
	switch len(fds) {
	case 0:
		return nil, nil
	case 1:
		return os.NewFile(uintptr(fds[0]), "gpuactor-received-handle"), nil
	}
	for _, fd := range fds {
		_ = syscall.Close(fd)
	}
	return nil, fmt.Errorf("%w: %d descriptors in one message, SendHandle sends one", ErrTransfer, len(fds))
}

func ipcBoolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// ipcMidMessage is err for a read that began a message: an end of stream there is unexpected.
func ipcMidMessage(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}
