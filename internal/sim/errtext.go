package sim

import (
	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

var _ backend.ErrorDescriber = (*Backend)(nil)

// ErrorName is the code's enum name, as cudaGetErrorName.
func (b *Backend) ErrorName(code cudaerr.Code) string {
	if !code.Known() {
		return "unrecognized error code"
	}
	return code.Name()
}

// ErrorString is the runtime's text for the codes the simulator returns, and the code's own
// description for the rest.
func (b *Backend) ErrorString(code cudaerr.Code) string {
	if msg, ok := runtimeMessages[code]; ok {
		return msg
	}
	if !code.Known() {
		return "unrecognized error code"
	}
	return code.Message()
}
