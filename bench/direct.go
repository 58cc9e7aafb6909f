package main

import (
	"errors"
	"fmt"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/cudart"
	"github.com/gpuactor/gpuactor/internal/sim"
)

// direct is a device opened straight through the backend, with no actor, on the calling
// (locked) thread: what the binding-overhead rows and the Direct benchmarks measure. Its
// stream has run the empty kernel once, as in the C++ baseline: a never-used stream answers
// queries faster than one a program has actually used.
type direct struct {
	dev    backend.Device
	stream backend.Stream
	empty  backend.Kernel
	close  func()
}

func openDirect(kind device.BackendKind, ordinal int) (*direct, error) {
	var be backend.Backend
	if kind == device.BackendSim {
		be = sim.New()
	} else {
		rt, err := cudart.Load()
		if err != nil {
			return nil, err
		}
		be = cudart.NewBackend(rt)
	}
	d, err := be.Open(ordinal)
	if err != nil {
		return nil, err
	}
	s, err := d.StreamCreate(backend.StreamNonBlocking, 0)
	if err != nil {
		return nil, err
	}
	k, unload, err := directEmptyKernel(d, kind == device.BackendSim)
	if err != nil {
		return nil, errors.Join(err, d.StreamDestroy(s))
	}
	closeAll := func() { unload(); d.StreamDestroy(s) }
	if err := d.Launch(k, cuda.Dim(1), cuda.Dim(1), 0, s, nil); err != nil {
		closeAll()
		return nil, err
	}
	if err := d.StreamSynchronize(s); err != nil {
		closeAll()
		return nil, err
	}
	return &direct{dev: d, stream: s, empty: k, close: closeAll}, nil
}

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
