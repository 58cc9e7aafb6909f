package device

import (
	"context"
	"fmt"
	"math/bits"
	"strings"

	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
)

// Flags are a device's context flags (cudaSetDeviceFlags): how the thread that waits for the
// device waits, and what its context allows. They belong to the device's primary context,
// which every handle of the process on that device shares, so they are set once, before the
// context exists: pass them to Open with WithFlags.
type Flags uint32

// The flags. At most one Schedule flag may be set; ScheduleAuto is none of them.
const (
	// ScheduleAuto lets the runtime choose: spin while there are fewer active contexts than
	// logical CPUs, else yield.
	ScheduleAuto Flags = Flags(backend.DeviceScheduleAuto)
	// ScheduleSpin makes a waiting thread spin: the lowest latency, a busy CPU.
	ScheduleSpin Flags = Flags(backend.DeviceScheduleSpin)
	// ScheduleYield makes a waiting thread yield its CPU between checks.
	ScheduleYield Flags = Flags(backend.DeviceScheduleYield)
	// ScheduleBlockingSync makes a waiting thread sleep on a synchronization primitive until
	// the device is done: no CPU spent waiting, a wake-up's latency.
	ScheduleBlockingSync Flags = Flags(backend.DeviceScheduleBlockingSync)
	// MapHost allows mapped pinned host memory; the runtime always sets it.
	MapHost Flags = Flags(backend.DeviceMapHost)
	// LmemResizeToMax keeps local memory at its largest size after a kernel grew it; it is
	// the runtime's behaviour whatever the flag, and kept for completeness.
	LmemResizeToMax Flags = Flags(backend.DeviceLmemResizeToMax)
	// SyncMemops makes synchronous memory operations always synchronize.
	SyncMemops Flags = Flags(backend.DeviceSyncMemops)
)

var flagNames = []struct {
	f    Flags
	name string
}{
	{ScheduleSpin, "ScheduleSpin"}, {ScheduleYield, "ScheduleYield"}, {ScheduleBlockingSync, "ScheduleBlockingSync"},
	{MapHost, "MapHost"}, {LmemResizeToMax, "LmemResizeToMax"}, {SyncMemops, "SyncMemops"},
}

// String lists the flags set, e.g. "ScheduleBlockingSync|MapHost"; "ScheduleAuto" for none.
func (f Flags) String() string {
	var parts []string
	for _, n := range flagNames {
		if f&n.f != 0 {
			parts = append(parts, n.name)
			f &^= n.f
		}
	}
	if f != 0 {
		parts = append(parts, fmt.Sprintf("%#x", uint32(f)))
	}
	if len(parts) == 0 {
		return "ScheduleAuto"
	}
	return strings.Join(parts, "|")
}

// validate reports what is wrong with f as context flags.
func (f Flags) validate() error {
	if f&^Flags(backend.DeviceFlagsMask) != 0 {
		return core.Invalid("device flags %#x have bits outside the flags' mask %#x", uint32(f), backend.DeviceFlagsMask)
	}
	if bits.OnesCount32(uint32(f&Flags(backend.DeviceScheduleMask))) > 1 {
		return core.Invalid("device flags %v set more than one of ScheduleSpin, ScheduleYield and ScheduleBlockingSync", f)
	}
	return nil
}

// WithFlags opens the device with context flags f, set on the device's actor thread before the
// primary context is made. If the process already holds the device's primary context (another
// open handle of the same device, or another library) with other Schedule or SyncMemops flags,
// Open fails with an error wrapping cudaerr.SetOnActiveProcess and naming both: the flags of a
// context cannot change under the code that uses it. Invalid flags (more than one Schedule
// flag, unknown bits) fail Open with ErrInvalidArgument. An isolated device does not take
// flags. Without WithFlags, the device keeps whatever flags its context has (ScheduleAuto for
// a context Open makes).
func WithFlags(f Flags) Option { return func(c *config) { c.flags = &f } }

// openFlags are the flags to open with, nil for none, or what is wrong with them.
func (c *config) openFlags() (*uint32, error) {
	if c.flags == nil {
		return nil, nil
	}
	if err := c.flags.validate(); err != nil {
		return nil, err
	}
	f := uint32(*c.flags)
	return &f, nil
}

// Flags are the flags of the device's primary context (cudaGetDeviceFlags), as the runtime
// reports them (MapHost included, which it always sets); it returns once the actor has asked.
func (d *Device) Flags(ctx context.Context) (Flags, error) {
	return core.Run(ctx, d.core(), func(rt backend.Device, _ *core.Tracker) (Flags, error) {
		f, err := rt.DeviceFlags()
		if err != nil {
			return 0, fmt.Errorf("gpuactor: device %d: reading its flags: %w", d.Ordinal(), err)
		}
		return Flags(f), nil
	}).Await(ctx)
}
