package core

import (
	"context"
	"sync"

	"github.com/gpuactor/gpuactor/internal/backend"
)

// OpenEvent makes an Event of d from a handle open makes on the actor thread (an event another
// process shared, say), with the flags it behaves as; Close, or the device's Close, destroys
// it with EventDestroy like any other.
func OpenEvent(ctx context.Context, d *Device, flags uint32, open func(rt backend.Device) (backend.Event, error)) (*Event, error) {
	return makeEvent(ctx, d, flags, false, open)
}

// PoolHandle is the handle of a pool of package alloc and its device, checked alive; actor
// thread only. Package alloc sets it at init (SetPoolHandle), so that packages above alloc
// (interop) reach a pool's handle without alloc exporting it.
func PoolHandle(pool any) (*Device, backend.MemPool, error) {
	poolHandleMu.RLock()
	fn := poolHandleFn
	poolHandleMu.RUnlock()
	if fn == nil {
		return nil, 0, Invalid("%T is not a memory pool", pool)
	}
	return fn(pool)
}

// PoolDevice is the device of a pool of package alloc, from any goroutine.
func PoolDevice(pool any) (*Device, error) {
	poolHandleMu.RLock()
	fn := poolDeviceFn
	poolHandleMu.RUnlock()
	if fn == nil {
		return nil, Invalid("%T is not a memory pool", pool)
	}
	return fn(pool)
}

// SetPoolHandle installs package alloc's PoolHandle and PoolDevice.
func SetPoolHandle(handle func(pool any) (*Device, backend.MemPool, error), dev func(pool any) (*Device, error)) {
	poolHandleMu.Lock()
	poolHandleFn, poolDeviceFn = handle, dev
	poolHandleMu.Unlock()
}

var (
	poolHandleMu sync.RWMutex
	poolHandleFn func(pool any) (*Device, backend.MemPool, error)
	poolDeviceFn func(pool any) (*Device, error)
)
