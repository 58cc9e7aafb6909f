package alloc

import (
	"errors"
	"fmt"

	"github.com/gpuactor/gpuactor/device"
)

var (
	// ErrOversubscribe: a managed allocation larger than the device's free memory.
	ErrOversubscribe = errors.New("gpuactor/alloc: managed allocation larger than the device's free memory")
	// ErrElemType: a Buffer element type that holds pointers, or has no size.
	ErrElemType = errors.New("gpuactor/alloc: element type cannot live in device memory")
	// ErrPoolDestroyed: the pool was destroyed.
	ErrPoolDestroyed = errors.New("gpuactor/alloc: memory pool destroyed")
)

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{device.ErrInvalidArgument}, args...)...)
}

func wrongDevice(what string, owner, used *device.Device) error {
	return fmt.Errorf("%w: %s belongs to device %d, used on device %d", device.ErrWrongDevice, what, owner.Ordinal(), used.Ordinal())
}
