package device

import "github.com/gpuactor/gpuactor/internal/core"

// StagingSlotSize is the size in bytes of one staging slot: the unit in which a device pins
// memory for copies of Go slices (streams.CopyToDevice, streams.CopyFromDevice).
const StagingSlotSize = core.StagingSlotSize

// DefaultStagingLimit is how much pinned memory a device uses for staging unless
// WithStagingLimit says otherwise: 256 MiB.
const DefaultStagingLimit = core.DefaultStagingLimit

// WithStagingLimit caps the pinned memory each device opened with it uses for staging copies
// of Go slices, in bytes, rounded down to whole StagingSlotSize slots and at least one slot.
// All of a device's streams share it: a copy borrows slots while the GPU uses them, and when
// every slot is lent it waits (until its context ends) for one to come back instead of
// pinning more. The device pins slots as copies first need them and keeps them until it
// closes. 0 means DefaultStagingLimit.
func WithStagingLimit(bytes uint64) Option { return func(c *config) { c.stagingLimit = bytes } }
