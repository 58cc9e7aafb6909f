package remote

import "github.com/gpuactor/gpuactor/internal/backend"

// UserObjectCreate is refused: destroy is a closure of the parent, which the worker's runtime
// would have to call back across the processes when the last reference goes.
func (d *Device) UserObjectCreate(destroy func()) (backend.UserObject, error) {
	return 0, refuse("UserObjectCreate")
}
