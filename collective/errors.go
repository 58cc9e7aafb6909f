package collective

import (
	"errors"

	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
)

// Error is a failure NCCL reported: the ncclResult_t in Code, the call in Call and NCCL's
// last-error text in Detail. Match it with errors.As.
type Error = backend.CollError

// NCCL's result codes an *Error carries.
const (
	CodeUnhandledCudaError = backend.CollUnhandledCudaError
	CodeSystemError        = backend.CollSystemError
	CodeInternalError      = backend.CollInternalError
	CodeInvalidArgument    = backend.CollInvalidArgument
	CodeInvalidUsage       = backend.CollInvalidUsage
	CodeRemoteError        = backend.CollRemoteError
)

var (
	// ErrNoNCCL is matched (errors.Is) by every call on a device whose backend has no NCCL to
	// drive: on the CUDA backend, no libnccl loaded, and the error lists every path tried
	// (see the package documentation for the search).
	ErrNoNCCL = backend.ErrCollUnavailable

	// ErrAborted is matched by an operation on an aborted communicator, and by Join, Split,
	// Finalize or Close when ctx ended before NCCL finished, which aborted the communicator
	// (the error matches ctx's error too).
	ErrAborted = errors.New("collective: communicator aborted")
)

var (
	errTwoStreams = invalid("each rank's operations of a group must share one stream")
	errEmptyGroup = invalid("collective: Launch of an empty group")
)

// invalid is an ErrInvalidArgument error.
func invalid(msg string) error { return core.Invalid("%s", msg) }
