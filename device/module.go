package device

import (
	"context"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
)

// Module is loaded device code: compiled from source (Compile), or loaded from PTX or cubin
// bytes (LoadModule).
type Module core.Module

// Kernel is a launchable function of a Module; streams.Stream.Launch and the graph builders of
// package graphs launch it.
type Kernel core.Kernel

func (m *Module) core() *core.Module { return (*core.Module)(m) }

func (k *Kernel) core() *core.Kernel { return (*core.Kernel)(k) }

// ImageKind says what bytes LoadModule is given.
type ImageKind uint8

// Module image kinds.
const (
	PTX   = ImageKind(backend.ImagePTX)
	Cubin = ImageKind(backend.ImageCubin)
)

// LoadModule loads compiled device code; it returns once the module is loaded. For PTX the
// kernels' parameters are read from the PTX and checked at launch; for a cubin the runtime
// gives their sizes (cudaFuncGetParamInfo, 12.4+), which launches are checked against, and
// before 12.4 they are not known and not checked. sim supplies the kernels' Go implementations for the simulator
// (ignored by the cuda backend).
func (d *Device) LoadModule(ctx context.Context, name string, image []byte, kind ImageKind, sim map[string]cuda.SimKernel) (*Module, error) {
	if d == nil {
		return nil, core.Invalid("LoadModule on a nil device")
	}
	if len(image) == 0 && d.Backend() != BackendSim {
		return nil, core.Invalid("LoadModule of an empty image")
	}
	if kind != PTX && kind != Cubin {
		return nil, core.Invalid("LoadModule of an image of unknown kind %d (PTX or Cubin)", kind)
	}
	var sigs core.Signatures
	if kind == PTX {
		sigs = core.PTXSignatures(string(image))
	}
	spec := backend.ModuleSpec{Image: image, ImageKind: backend.ImageKind(kind), SimKernels: sim}
	m, err := core.LoadModule(ctx, d.core(), name, spec, sigs)
	return (*Module)(m), err
}

// Name is the module's source name.
func (m *Module) Name() string { return m.core().Name() }

// Kernel looks up a kernel by its extern "C" name; it returns once the device has found it.
func (m *Module) Kernel(ctx context.Context, name string) (*Kernel, error) {
	if m == nil {
		return nil, core.Invalid("Kernel of a nil module")
	}
	k, err := m.core().Kernel(ctx, name)
	return (*Kernel)(k), err
}

// Close unloads the module after the work queued on the device's own stream has finished, and
// returns once it is unloaded; its kernels can no longer be launched. Closing twice is an
// ErrClosed error.
func (m *Module) Close(ctx context.Context) error { return m.core().Close(ctx) }

// Name is the kernel's name.
func (k *Kernel) Name() string { return k.core().Name() }

// Module is the module the kernel belongs to.
func (k *Kernel) Module() *Module { return (*Module)(k.core().Module()) }

// MaxActiveBlocksPerSM is how many blocks of the kernel, of blockSize threads and
// dynamicSharedBytes of dynamic shared memory each, one multiprocessor of its device holds at
// once (cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags); 0 when such a block cannot be
// resident. Above 48 KiB of shared memory it first raises the kernel's limit, as a launch
// asking that much would. It runs on the device's actor and returns once the device answered.
// A block size outside 1 to the device's threads per block, or shared memory outside 0 to its
// opt-in limit, is an ErrInvalidArgument error; a kernel of a closed module is an ErrClosed
// error.
func (k *Kernel) MaxActiveBlocksPerSM(ctx context.Context, blockSize, dynamicSharedBytes int, opts ...OccupancyOption) (int, error) {
	return k.core().MaxActiveBlocksPerSM(ctx, blockSize, dynamicSharedBytes, occupancyFlags(opts))
}

// Params lists the kernel's parameter kinds as gpuactor checks them, or nil when they are
// unknown (a cubin on a runtime before 12.4, or a parameter type other than a scalar or a
// pointer). For a cubin whose parameters the runtime describes by size only, a 4-byte
// parameter reads as Int32 and an 8-byte one as Int64, and any argument of that size passes.
func (k *Kernel) Params() []cuda.ArgKind { return k.core().Params() }
