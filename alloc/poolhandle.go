package alloc

import (
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
)

// A pool's handle stays unexported; package interop, which exports pools made with
// ExportAs(HandlePosixFD) to other processes, reaches it through internal/core.
func init() {
	core.SetPoolHandle(func(pool any) (*core.Device, backend.MemPool, error) {
		p, err := asPool(pool)
		if err != nil {
			return nil, 0, err
		}
		if err := p.alive(); err != nil {
			return nil, 0, err
		}
		return coreDev(p.dev), p.h, nil
	}, func(pool any) (*core.Device, error) {
		p, err := asPool(pool)
		if err != nil {
			return nil, err
		}
		return coreDev(p.dev), nil
	})
}

func asPool(pool any) (*Pool, error) {
	p, ok := pool.(*Pool)
	if !ok || p == nil {
		return nil, core.Invalid("not an *alloc.Pool: %T", pool)
	}
	return p, nil
}
