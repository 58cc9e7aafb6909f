package device

import (
	"context"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// ErrorText is the loaded runtime's name and description of code (cudaGetErrorName and
// cudaGetErrorString) on the backend opts select, for codes the runtime knows better than this
// package's table: a newer runtime's codes, and the runtime's own wording. On the simulator it
// is the simulator's. A code the runtime does not know gets its "unrecognized error code"
// answer, not an error; the error is for a backend that cannot load.
func ErrorText(ctx context.Context, code cudaerr.Code, opts ...Option) (name, description string, err error) {
	if err := ctx.Err(); err != nil {
		return "", "", err
	}
	be, err := selectBackend(newConfig(opts))
	if err != nil {
		return "", "", err
	}
	if ed, ok := be.(backend.ErrorDescriber); ok {
		return ed.ErrorName(code), ed.ErrorString(code), nil
	}
	return code.Name(), code.Message(), nil
}
