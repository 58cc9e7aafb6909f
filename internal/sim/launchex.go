package sim

import (
	"slices"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// portableClusterSize is the most blocks a cluster may hold without
// cudaFuncAttributeNonPortableClusterSizeAllowed; nonPortableClusterSize with it.
const (
	portableClusterSize    = 8
	nonPortableClusterSize = 16
)

// LaunchEx queues k on s with launch attributes, after the runtime's checks of them: a
// cooperative grid must fit co-resident (cudaerr.CooperativeLaunchTooLarge), a cluster needs
// compute capability 9.0 and must tile the grid within the kernel's cluster size limit
// (cudaerr.InvalidClusterSize). A simulated kernel runs its whole grid in one call, so a
// cooperative kernel's grid-wide synchronization is the Go function's own sequencing; the
// priority, memory synchronization domain and programmatic serialization change nothing in
// a simulator that runs one stream's kernels in order, and a programmatic event is recorded
// when the kernel ends.
func (d *device) LaunchEx(kh backend.Kernel, grid, block backend.Dim3, sharedMem uint32, sh backend.Stream, args []backend.Arg, a backend.LaunchAttrs) error {
	const op = "cudaLaunchKernelExC"
	k, err := d.liveKernel(op, kh)
	if err != nil {
		return err
	}
	if k.mod.dev != d {
		return d.fail(op, cudaerr.InvalidResourceHandle, "kernel %q (%#x) was loaded on device %d, not device %d",
			k.name, uintptr(kh), k.mod.dev.ordinal, d.ordinal)
	}
	s, err := d.ownStream(op, sh)
	if err != nil {
		return err
	}
	if why := d.checkLaunch(grid, block, sharedMem); why != "" {
		return d.fail(op, cudaerr.InvalidConfiguration, "kernel %q: %s", k.name, why)
	}
	if err := d.checkKernelShared(op, k, sharedMem); err != nil {
		return err
	}
	if err := d.checkAttrs(op, k, grid, block, sharedMem, a); err != nil {
		return err
	}
	if d.captureKernel(s, k, grid, block, sharedMem, args) {
		return nil
	}
	args = slices.Clone(args)
	d.submit(s, &task{name: k.label, run: func() { d.runKernel(k, s, grid, block, sharedMem, args) }})
	if a.ProgrammaticEvent != 0 {
		// The event fires once every block has triggered or finished: at the kernel's end is
		// the latest that allows.
		return d.EventRecord(a.ProgrammaticEvent, sh)
	}
	return nil
}

// checkAttrs checks a launch's attributes against the device and the kernel.
func (d *device) checkAttrs(op string, k *kernel, grid, block backend.Dim3, sharedMem uint32, a backend.LaunchAttrs) error {
	if a.MemSyncDomain > 1 {
		return d.fail(op, cudaerr.InvalidValue, "kernel %q: memory synchronization domain %d is outside 0 to 1", k.name, a.MemSyncDomain)
	}
	if a.ClusterScheduling > 2 {
		return d.fail(op, cudaerr.InvalidValue, "kernel %q: cluster scheduling policy %d is outside 0 to 2", k.name, a.ClusterScheduling)
	}
	ka := d.kernelAttrsOf(k)
	cluster := a.Cluster
	if cluster == (backend.Dim3{}) && ka.requiredCluster != (backend.Dim3{}) {
		cluster = ka.requiredCluster
	}
	if cluster != (backend.Dim3{}) {
		if err := d.checkCluster(op, k, ka, grid, cluster); err != nil {
			return err
		}
	}
	if a.Cooperative {
		if d.attrs[backend.AttrCooperativeLaunch] == 0 {
			return d.fail(op, cudaerr.NotSupported, "kernel %q: the device does not support cooperative launches", k.name)
		}
		perSM := d.maxActiveBlocks(ka, int(block.Count()), uint64(sharedMem))
		most := uint64(perSM) * uint64(d.attrs[backend.AttrMultiProcessorCount])
		if grid.Count() > most {
			return d.fail(op, cudaerr.CooperativeLaunchTooLarge, "kernel %q: a cooperative grid of %d blocks exceeds the %d that can be resident at once (%d per multiprocessor × %d multiprocessors)",
				k.name, grid.Count(), most, perSM, d.attrs[backend.AttrMultiProcessorCount])
		}
	}
	return nil
}

// checkCluster checks a cluster shape: compute capability 9.0, no zero extent, extents that
// divide the grid's, the kernel's required shape, and the portable or non-portable limit.
func (d *device) checkCluster(op string, k *kernel, ka kernelAttrs, grid, c backend.Dim3) error {
	if cc := d.attrs[backend.AttrComputeCapabilityMajor]; cc < 9 {
		return d.fail(op, cudaerr.NotSupported, "kernel %q: thread block clusters need compute capability 9.0, the device has %d.%d", k.name, cc, d.attrs[backend.AttrComputeCapabilityMinor])
	}
	switch {
	case c.X == 0 || c.Y == 0 || c.Z == 0:
		return d.fail(op, cudaerr.InvalidClusterSize, "kernel %q: cluster %dx%dx%d has a zero extent", k.name, c.X, c.Y, c.Z)
	case grid.X%c.X != 0 || grid.Y%c.Y != 0 || grid.Z%c.Z != 0:
		return d.fail(op, cudaerr.InvalidClusterSize, "kernel %q: cluster %dx%dx%d does not divide grid %dx%dx%d", k.name, c.X, c.Y, c.Z, grid.X, grid.Y, grid.Z)
	case ka.requiredCluster != (backend.Dim3{}) && c != ka.requiredCluster:
		r := ka.requiredCluster
		return d.fail(op, cudaerr.InvalidClusterSize, "kernel %q: cluster %dx%dx%d differs from the kernel's required %dx%dx%d", k.name, c.X, c.Y, c.Z, r.X, r.Y, r.Z)
	}
	if limit := clusterLimit(ka); c.Count() > uint64(limit) {
		return d.fail(op, cudaerr.InvalidClusterSize, "kernel %q: cluster %dx%dx%d holds %d blocks, more than the %d allowed", k.name, c.X, c.Y, c.Z, c.Count(), limit)
	}
	return nil
}

func clusterLimit(ka kernelAttrs) int {
	if ka.nonPortable {
		return nonPortableClusterSize
	}
	return portableClusterSize
}
