package graphs

import (
	"errors"
	"fmt"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/core"
	"github.com/gpuactor/gpuactor/streams"
)

var (
	// ErrForeignNode: a node of one graph used with another.
	ErrForeignNode = errors.New("gpuactor/graphs: node belongs to another graph")
	// ErrCapture: a capture could not begin or end (the stream is already capturing, an
	// operation the capture forbids invalidated it, forked work was never joined…).
	ErrCapture = errors.New("gpuactor/graphs: stream capture failed")
)

// UpdateError is a refused Exec.Update: the new graph's topology or nodes differ from the
// executable graph's in a way an update cannot apply. It matches cudaerr.GraphExecUpdateFailure
// through errors.Is.
type UpdateError struct {
	Reason string // what differs
	Node   *Node  // the node of the new graph that could not be applied, when known
	Err    error  // the runtime's error
}

func (e *UpdateError) Error() string {
	if e.Node != nil {
		return fmt.Sprintf("gpuactor/graphs: update refused: %s (at %s)", e.Reason, e.Node)
	}
	return "gpuactor/graphs: update refused: " + e.Reason
}

// Unwrap returns the runtime's error.
func (e *UpdateError) Unwrap() error { return e.Err }

func invalid(format string, args ...any) error { return core.Invalid(format, args...) }

func wrongDevice(what string, owner, used *device.Device) error {
	return core.WrongDevice(what, coreDev(owner), coreDev(used))
}

func closed(what string) error { return core.Closed("%s used after Close", what) }

func failed(err error) *streams.Future { return actor.Completed(struct{}{}, err) }

func coreDev(d *device.Device) *core.Device { return (*core.Device)(d) }

func coreStream(s *streams.Stream) *core.Stream { return (*core.Stream)(s) }
