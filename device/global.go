package device

import (
	"context"

	"github.com/gpuactor/gpuactor/internal/core"
)

// Global is the module's __device__ or __constant__ variable name (declared extern "C", or
// looked up by its mangled name) as a Buffer over the module's memory, sized as the variable
// is (cudaLibraryGetGlobal). Copies, memsets and kernel launches take it as any Buffer, so a
// kernel reads a __constant__ table a stream copied into it, and a stream copies back what a
// kernel wrote to a __device__ variable; a copy that runs past the variable's size is refused,
// naming both. It runs on the device's actor and returns once the device found the variable.
//
// The memory is the module's: the buffer does not count in the device's memory usage,
// closing it frees nothing, and closing the module closes it. A name the module does not
// define is an ErrNoGlobal error naming it (on the simulator, the module's variables are
// those its Source declares in SimGlobals); a closed module, an ErrClosed error.
func (m *Module) Global(ctx context.Context, name string) (*Buffer, error) {
	if m == nil {
		return nil, core.Invalid("Global of a nil module")
	}
	b, err := m.core().Global(ctx, name)
	return (*Buffer)(b), err
}
