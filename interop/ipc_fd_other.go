//go:build !unix

package interop

import (
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
)

// SendHandle fails with errors.ErrUnsupported here: descriptors pass between processes as
// SCM_RIGHTS messages over Unix sockets, which this OS does not have.
func SendHandle(conn *net.UnixConn, f *os.File, payload []byte) error {
	return fmt.Errorf("SendHandle: passing descriptors is not supported on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

// ReceiveHandle fails with errors.ErrUnsupported here, as SendHandle does.
func ReceiveHandle(conn *net.UnixConn) (*os.File, []byte, error) {
	return nil, nil, fmt.Errorf("ReceiveHandle: passing descriptors is not supported on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}
