package streams

import (
	"errors"
	"fmt"

	"github.com/gpuactor/gpuactor/device"
)

// ErrDestroyed: the stream or event was destroyed.
var ErrDestroyed = errors.New("gpuactor/streams: destroyed")

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{device.ErrInvalidArgument}, args...)...)
}

func wrongDevice(what string, owner, used *device.Device) error {
	return fmt.Errorf("%w: %s belongs to device %d, used on device %d", device.ErrWrongDevice, what, owner.Ordinal(), used.Ordinal())
}
