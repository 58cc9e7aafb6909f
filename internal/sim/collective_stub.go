package sim

import (
	"errors"

	"github.com/gpuactor/gpuactor/internal/backend"
)

// errNoCollectives stands until collectives are bound.
var errNoCollectives = errors.New("nccl: collectives are not implemented yet")

func (d *device) CollVersion() (int, error)             { return 0, errNoCollectives }
func (d *device) CollUniqueID() (backend.CommID, error) { return backend.CommID{}, errNoCollectives }
func (d *device) CollCommInitRank(int, backend.CommID, int, backend.CommConfig) (backend.Comm, error) {
	return 0, errNoCollectives
}
func (d *device) CollCommSplit(backend.Comm, int, int, backend.CommConfig) (backend.Comm, error) {
	return 0, errNoCollectives
}
func (d *device) CollCommAsyncError(backend.Comm) error { return errNoCollectives }
func (d *device) CollCommInfo(backend.Comm) (int, int, int, error) {
	return 0, 0, 0, errNoCollectives
}
func (d *device) CollLaunch(backend.Comm, backend.Stream, []backend.CollOp) error {
	return errNoCollectives
}
func (d *device) CollCommFinalize(backend.Comm) error { return errNoCollectives }
func (d *device) CollCommDestroy(backend.Comm) error  { return errNoCollectives }
func (d *device) CollCommAbort(backend.Comm) error    { return errNoCollectives }
