//go:build !(linux && (amd64 || arm64))

package remote

import (
	"errors"
	"os"
)

var errNoShared = errors.New("host memory shared with a worker is supported on Linux (amd64, arm64) only")

func newShared(uint64) ([]byte, *os.File, error)  { return nil, nil, errNoShared }
func mapPeer(int, uint64, uint64) ([]byte, error) { return nil, errNoShared }
func unmapShared([]byte) error                    { return errNoShared }
