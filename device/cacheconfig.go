package device

import (
	"context"
	"fmt"

	"github.com/gpuactor/gpuactor/cuda"

	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
)

// CacheConfig is the device's preferred split of on-chip memory between L1 and shared memory
// for kernels that state none of their own (cudaDeviceGetCacheConfig); it returns once the
// actor has asked. The device uses the split a kernel's shared memory needs.
func (d *Device) CacheConfig(ctx context.Context) (cuda.CacheConfig, error) {
	return core.Run(ctx, d.core(), func(rt backend.Device, _ *core.Tracker) (cuda.CacheConfig, error) {
		c, err := rt.CacheConfig()
		if err != nil {
			return 0, fmt.Errorf("gpuactor: device %d: reading its cache preference: %w", d.Ordinal(), err)
		}
		return cuda.CacheConfig(c), nil
	}).Await(ctx)
}

// SetCacheConfig sets the device's cache preference for kernels launched after it
// (cudaDeviceSetCacheConfig); it returns once the device has taken it. A value that is not one
// of the preferences is ErrInvalidArgument.
func (d *Device) SetCacheConfig(ctx context.Context, p cuda.CacheConfig) error {
	if p > cuda.CachePreferEqual {
		return core.Invalid("SetCacheConfig: %v is not one of cuda.CachePreferNone, CachePreferShared, CachePreferL1 and CachePreferEqual", p)
	}
	return core.Do(ctx, d.core(), func(rt backend.Device, _ *core.Tracker) error {
		if err := rt.SetCacheConfig(int32(p)); err != nil {
			return fmt.Errorf("gpuactor: device %d: setting its cache preference to %v: %w", d.Ordinal(), p, err)
		}
		return nil
	})
}

// BankSize is a cudaSharedMemConfig: the width of a shared-memory bank.
type BankSize int32

// The bank sizes.
const (
	BankSizeDefault   BankSize = 0 // the device's own
	BankSizeFourByte  BankSize = 1
	BankSizeEightByte BankSize = 2
)

// String is the bank size's runtime name, e.g. "cudaSharedMemBankSizeFourByte".
func (b BankSize) String() string {
	switch b {
	case BankSizeDefault:
		return "cudaSharedMemBankSizeDefault"
	case BankSizeFourByte:
		return "cudaSharedMemBankSizeFourByte"
	case BankSizeEightByte:
		return "cudaSharedMemBankSizeEightByte"
	}
	return fmt.Sprintf("cudaSharedMemConfig(%d)", int32(b))
}

// SharedMemConfig is the device's shared-memory bank width (cudaDeviceGetSharedMemConfig,
// deprecated by CUDA 12 and still in 13.0): BankSizeFourByte on every GPU since Maxwell, whose
// width is fixed. It returns once the actor has asked.
func (d *Device) SharedMemConfig(ctx context.Context) (BankSize, error) {
	return core.Run(ctx, d.core(), func(rt backend.Device, _ *core.Tracker) (BankSize, error) {
		c, err := rt.SharedMemConfig()
		if err != nil {
			return 0, fmt.Errorf("gpuactor: device %d: reading its shared memory bank size: %w", d.Ordinal(), err)
		}
		return BankSize(c), nil
	}).Await(ctx)
}

// SetSharedMemConfig asks for a shared-memory bank width (cudaDeviceSetSharedMemConfig,
// deprecated by CUDA 12 and still in 13.0). Devices with a fixed width, every GPU since
// Maxwell, accept it and change nothing. A value that is not a BankSize is ErrInvalidArgument.
func (d *Device) SetSharedMemConfig(ctx context.Context, b BankSize) error {
	if b < BankSizeDefault || b > BankSizeEightByte {
		return core.Invalid("SetSharedMemConfig: %v is not one of BankSizeDefault, BankSizeFourByte and BankSizeEightByte", b)
	}
	return core.Do(ctx, d.core(), func(rt backend.Device, _ *core.Tracker) error {
		if err := rt.SetSharedMemConfig(int32(b)); err != nil {
			return fmt.Errorf("gpuactor: device %d: setting its shared memory bank size to %v: %w", d.Ordinal(), b, err)
		}
		return nil
	})
}
