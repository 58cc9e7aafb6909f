package sim

import (
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"

	"go.uber.org/zap"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// module is a loaded ModuleSpec: the simulator keeps its SimKernels.
type module struct {
	h   backend.Module
	dev *device
	fns map[string]backend.SimKernel

	mu      sync.Mutex
	kernels map[string]*kernel     // looked up so far
	globals map[string]*allocation // the spec's SimGlobals, placed at load (global.go)
}

// kernel is a kernel looked up in a module.
type kernel struct {
	h     backend.Kernel
	mod   *module
	name  string
	label string // `kernel "name"`, for fault messages
	fn    backend.SimKernel
	attrs kernelAttrs // settable attributes, under the backend's mu (funcattr.go)
}

// LoadModule loads spec's SimKernels (the image is accepted and ignored). A spec with neither
// an image nor sim kernels is cudaerr.InvalidValue.
func (d *device) LoadModule(spec backend.ModuleSpec) (backend.Module, error) {
	const op = "cudaLibraryLoadData"
	if err := d.alive(op); err != nil {
		return 0, err
	}
	if len(spec.Image) == 0 && len(spec.SimKernels) == 0 && len(spec.SimGlobals) == 0 {
		return 0, d.fail(op, cudaerr.InvalidValue, "the module spec has neither an image nor sim kernels")
	}
	m := &module{dev: d, fns: make(map[string]backend.SimKernel, len(spec.SimKernels)), kernels: map[string]*kernel{}}
	for name, fn := range spec.SimKernels { // a copy: the caller may reuse its map
		if fn != nil {
			m.fns[name] = fn
		}
	}
	if err := d.loadGlobals(op, m, spec.SimGlobals); err != nil {
		return 0, err
	}
	m.h = backend.Module(d.b.nextHandle())
	d.b.mu.Lock()
	d.b.modules[m.h] = m
	d.b.mu.Unlock()
	return m.h, nil
}

// module looks up a loaded module of d.
func (d *device) module(op string, h backend.Module) (*module, error) {
	d.b.mu.RLock()
	m := d.b.modules[h]
	d.b.mu.RUnlock()
	if m == nil {
		return nil, d.fail(op, cudaerr.InvalidResourceHandle, "module %#x is not loaded (unloaded, or never loaded)", uintptr(h))
	}
	if m.dev != d {
		return nil, d.fail(op, cudaerr.InvalidResourceHandle, "module %#x was loaded on device %d, not device %d",
			uintptr(h), m.dev.ordinal, d.ordinal)
	}
	return m, nil
}

// ModuleKernel looks up a kernel by name. A name without a Go implementation in the spec's
// SimKernels is cudaerr.SymbolNotFound. Looking a name up twice gives the same handle.
func (d *device) ModuleKernel(h backend.Module, name string) (backend.Kernel, error) {
	const op = "cudaLibraryGetKernel"
	if err := d.alive(op); err != nil {
		return 0, err
	}
	m, err := d.module(op, h)
	if err != nil {
		return 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if k := m.kernels[name]; k != nil {
		return k.h, nil
	}
	fn := m.fns[name]
	if fn == nil {
		have := "none"
		if len(m.fns) > 0 {
			names := make([]string, 0, len(m.fns))
			for n := range m.fns {
				names = append(names, fmt.Sprintf("%q", n))
			}
			slices.Sort(names)
			have = strings.Join(names, ", ")
		}
		return 0, d.fail(op, cudaerr.SymbolNotFound,
			"kernel %q has no Go implementation registered for the simulator (ModuleSpec.SimKernels has: %s)", name, have)
	}
	k := &kernel{h: backend.Kernel(d.b.nextHandle()), mod: m, name: name, label: fmt.Sprintf("kernel %q", name), fn: fn,
		attrs: d.defaultKernelAttrs()}
	m.kernels[name] = k
	d.b.mu.Lock()
	d.b.kernels[k.h] = k
	d.b.mu.Unlock()
	return k.h, nil
}

// UnloadModule unloads a module: its kernel handles become invalid. Launches already queued
// still run.
func (d *device) UnloadModule(h backend.Module) error {
	const op = "cudaLibraryUnload"
	if err := d.alive(op); err != nil {
		return err
	}
	m, err := d.module(op, h)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	d.b.mu.Lock()
	defer d.b.mu.Unlock()
	if d.b.modules[h] != m {
		return d.fail(op, cudaerr.InvalidResourceHandle, "module %#x is not loaded (unloaded, or never loaded)", uintptr(h))
	}
	delete(d.b.modules, h)
	for _, k := range m.kernels {
		delete(d.b.kernels, k.h)
	}
	d.freeGlobals(m)
	return nil
}

// Launch queues k on s. When the stream reaches it the kernel's Go function runs once, on the
// stream's goroutine; an error or a panic is a sticky device fault.
func (d *device) Launch(kh backend.Kernel, grid, block backend.Dim3, sharedMem uint32, sh backend.Stream, args []backend.Arg) error {
	const op = "cudaLaunchKernel"
	if err := d.alive(op); err != nil {
		return err
	}
	d.b.mu.RLock()
	k := d.b.kernels[kh]
	d.b.mu.RUnlock()
	if k == nil {
		return d.fail(op, cudaerr.InvalidResourceHandle, "kernel %#x is not a live kernel (its module was unloaded, or it was never looked up)", uintptr(kh))
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
	if d.captureKernel(s, k, grid, block, sharedMem, args) {
		return nil
	}
	args = slices.Clone(args) // the caller may reuse its slice
	d.submit(s, &task{name: k.label, run: func() { d.runKernel(k, s, grid, block, sharedMem, args) }})
	return nil
}

// checkLaunch explains why a launch shape is impossible on the device, or returns "".
func (d *device) checkLaunch(grid, block backend.Dim3, sharedMem uint32) string {
	a := d.attrs
	switch {
	case grid.X == 0 || grid.Y == 0 || grid.Z == 0:
		return fmt.Sprintf("grid %dx%dx%d has a zero extent", grid.X, grid.Y, grid.Z)
	case block.X == 0 || block.Y == 0 || block.Z == 0:
		return fmt.Sprintf("block %dx%dx%d has a zero extent", block.X, block.Y, block.Z)
	case uint64(block.X) > uint64(a[backend.AttrMaxBlockDimX]) || uint64(block.Y) > uint64(a[backend.AttrMaxBlockDimY]) ||
		uint64(block.Z) > uint64(a[backend.AttrMaxBlockDimZ]):
		return fmt.Sprintf("block %dx%dx%d exceeds the device's maximum block shape %dx%dx%d", block.X, block.Y, block.Z,
			a[backend.AttrMaxBlockDimX], a[backend.AttrMaxBlockDimY], a[backend.AttrMaxBlockDimZ])
	case block.Count() > uint64(a[backend.AttrMaxThreadsPerBlock]):
		return fmt.Sprintf("block %dx%dx%d has %d threads, more than the device's %d per block", block.X, block.Y, block.Z,
			block.Count(), a[backend.AttrMaxThreadsPerBlock])
	case uint64(grid.X) > uint64(a[backend.AttrMaxGridDimX]) || uint64(grid.Y) > uint64(a[backend.AttrMaxGridDimY]) ||
		uint64(grid.Z) > uint64(a[backend.AttrMaxGridDimZ]):
		return fmt.Sprintf("grid %dx%dx%d exceeds the device's maximum grid shape %dx%dx%d", grid.X, grid.Y, grid.Z,
			a[backend.AttrMaxGridDimX], a[backend.AttrMaxGridDimY], a[backend.AttrMaxGridDimZ])
	case uint64(sharedMem) > uint64(a[backend.AttrMaxSharedMemoryPerBlockOptin]):
		return fmt.Sprintf("%d bytes of dynamic shared memory exceed the device's %d per block", sharedMem,
			a[backend.AttrMaxSharedMemoryPerBlockOptin])
	}
	return ""
}

// runKernel runs one launch on the stream's goroutine and turns a failure into the device's
// sticky error.
func (d *device) runKernel(k *kernel, s *stream, grid, block backend.Dim3, sharedMem uint32, args []backend.Arg) {
	d.runKernelIn(k, s, grid, block, sharedMem, args, nil)
}

// runKernelIn is runKernel in a graph launch whose conditional variables the kernel may set.
func (d *device) runKernelIn(k *kernel, s *stream, grid, block backend.Dim3, sharedMem uint32, args []backend.Arg, conds cuda.SimConditionals) {
	mem := &memView{d: d}
	call := &backend.KernelCall{Grid: grid, Block: block, SharedMem: sharedMem, Args: args, Mem: mem,
		Globals: moduleGlobals{k.mod}, Conditionals: conds, Textures: texView{d: d, mem: mem}}
	var (
		err       error
		recovered any
		stack     []byte
	)
	func() {
		defer func() {
			if recovered = recover(); recovered != nil {
				stack = debug.Stack()
			}
		}()
		err = k.fn(call)
	}()
	if err == nil && recovered == nil {
		return
	}
	code := classifyFault(err, recovered, mem.oob.Load())
	var cause string
	if recovered != nil {
		cause = fmt.Sprintf("kernel %q on stream %#x panicked: %v", k.name, uintptr(s.h), recovered)
	} else {
		cause = fmt.Sprintf("kernel %q on stream %#x failed: %v", k.name, uintptr(s.h), err)
	}
	fields := []zap.Field{zap.String("kernel", k.name)}
	if stack != nil {
		fields = append(fields, zap.ByteString("stack", stack))
	}
	d.setFault(code, cause, fields...)
}

// classifyFault picks the sticky code for a failed kernel: the sticky code the kernel's error
// carries; cudaerr.IllegalAddress for an access outside device memory (a DeviceMemory bounds
// failure, an index out of range, a nil dereference); cudaerr.LaunchFailure for anything else.
func classifyFault(err error, recovered any, outOfBounds bool) cudaerr.Code {
	if e, ok := recovered.(error); ok {
		err = e
	}
	if c, ok := cudaerr.CodeOf(err); ok && c.Sticky() {
		return c
	}
	if outOfBounds {
		return cudaerr.IllegalAddress
	}
	var re runtime.Error
	if errors.As(err, &re) {
		msg := re.Error()
		for _, s := range []string{"index out of range", "slice bounds out of range", "nil pointer dereference", "invalid memory address"} {
			if strings.Contains(msg, s) {
				return cudaerr.IllegalAddress
			}
		}
	}
	return cudaerr.LaunchFailure
}
