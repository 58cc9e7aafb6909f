package alloc

import (
	"errors"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/streams"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/core"
)

var (
	// ErrOversubscribe: a managed allocation larger than the device's free memory.
	ErrOversubscribe = errors.New("gpuactor/alloc: managed allocation larger than the device's free memory")
	// ErrElemType: an element type of typed device, pinned, registered or managed memory
	// that holds pointers, or has no size.
	ErrElemType = errors.New("gpuactor/alloc: element type cannot live in device memory")
)

func wrongDevice(what string, owner, used *device.Device) error {
	return core.WrongDevice(what, (*core.Device)(owner), (*core.Device)(used))
}

func coreDev(d *device.Device) *core.Device { return (*core.Device)(d) }

func failed(err error) *streams.Future { return actor.Completed(struct{}{}, err) }
