package main

import (
	"fmt"

	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/cudart"
)

// directEmptyKernel loads the empty kernel straight through backend d (no actor): compiled
// with NVRTC for d's architecture on the real runtime, its Go twin on the simulator.
func directEmptyKernel(d backend.Device, simulated bool) (backend.Kernel, func(), error) {
	spec := backend.ModuleSpec{SimKernels: map[string]backend.SimKernel{"empty": func(*backend.KernelCall) error { return nil }}}
	if !simulated {
		major, err := d.Attribute(backend.AttrComputeCapabilityMajor)
		if err != nil {
			return 0, nil, err
		}
		minor, err := d.Attribute(backend.AttrComputeCapabilityMinor)
		if err != nil {
			return 0, nil, err
		}
		nv, err := cudart.LoadNVRTC()
		if err != nil {
			return 0, nil, err
		}
		prog, err := nv.Compile(emptySource, "empty.cu", []string{fmt.Sprintf("--gpu-architecture=sm_%d%d", major, minor)})
		if err != nil {
			return 0, nil, err
		}
		spec.Image, spec.ImageKind = prog.Cubin, backend.ImageCubin
	}
	m, err := d.LoadModule(spec)
	if err != nil {
		return 0, nil, err
	}
	k, err := d.ModuleKernel(m, "empty")
	if err != nil {
		d.UnloadModule(m)
		return 0, nil, err
	}
	return k, func() { d.UnloadModule(m) }, nil
}
