package core

import (
	"fmt"

	"github.com/gpuactor/gpuactor/internal/backend"
)

// launchLimits are the device figures that launch attributes are checked against.
type launchLimits struct {
	defaultShared    int // dynamic shared memory a kernel may use before its limit is raised
	multiprocessors  int
	ccMajor, ccMinor int
	cooperative      bool
	priorityLeast    int // the numerically greatest, lowest priority
	priorityGreatest int
}

// readLaunchLimits fills in l's launch attribute limits; on the actor thread at open.
func readLaunchLimits(rt backend.Device, l *Limits) error {
	var coop int
	for _, a := range []struct {
		attr backend.Attr
		dst  *int
	}{
		{backend.AttrMaxSharedMemoryPerBlock, &l.defaultShared},
		{backend.AttrMultiProcessorCount, &l.multiprocessors},
		{backend.AttrComputeCapabilityMajor, &l.ccMajor},
		{backend.AttrComputeCapabilityMinor, &l.ccMinor},
		{backend.AttrCooperativeLaunch, &coop},
	} {
		v, err := rt.Attribute(a.attr)
		if err != nil {
			return fmt.Errorf("gpuactor: reading device attribute %d: %w", a.attr, err)
		}
		*a.dst = v
	}
	l.cooperative = coop != 0
	least, greatest, err := rt.StreamPriorityRange()
	if err != nil {
		return fmt.Errorf("gpuactor: reading the stream priority range: %w", err)
	}
	l.priorityLeast, l.priorityGreatest = least, greatest
	return nil
}
