package graphs

import (
	"context"
	"fmt"
	"unsafe"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
)

// Staged is a graph's own pinned host memory, holding n values of T, that a copy node reads
// (AddUpload) or writes (AddDownload) at every launch. Fill it before a launch and read it
// after the launch's future has completed, never while a launch may run. It lives as long as
// the graph, its clones, the graphs it was made a child of and the executable graphs made
// from any of them: it is freed when the last of these is closed.
type Staged[T cuda.Numeric] struct {
	data []T
}

// Host is the staged values: a view of the pinned memory, not a copy (nil for a nil Staged).
func (s *Staged[T]) Host() []T {
	if s == nil {
		return nil
	}
	return s.data
}

// stage allocates pinned memory for n values of T owned by g's resources; on the actor thread.
func stage[T cuda.Numeric](rt backend.Device, g *Graph, n int) (*Staged[T], uint64, error) {
	var zero T
	size := uint64(n) * uint64(unsafe.Sizeof(zero))
	p, err := rt.HostAlloc(size, backend.HostAllocDefault)
	if err != nil {
		return nil, 0, fmt.Errorf("gpuactor/graphs: allocating %d bytes of pinned staging: %w", size, err)
	}
	g.res.addPinned(p)
	return &Staged[T]{data: unsafe.Slice((*T)(p), n)}, size, nil
}

// AddUpload adds a copy of len(src) values into the start of dst through pinned staging
// memory of the graph: src is copied there now, and Staged.Host changes what later launches
// upload.
func AddUpload[T cuda.Numeric](ctx context.Context, g *Graph, deps Deps, dst device.Mem, src []T) (*Node, *Staged[T], error) {
	if g == nil {
		return nil, nil, invalid("nil graph")
	}
	if len(src) == 0 {
		return nil, nil, invalid("AddUpload of an empty slice")
	}
	var st *Staged[T]
	n, err := g.add(ctx, deps, CopyNode, "upload", nil, func(rt backend.Device, hs []backend.GraphNode) (backend.GraphNode, error) {
		p, n, err := coreDev(g.dev).Resolve("upload destination", dst)
		if err != nil {
			return 0, err
		}
		s, size, err := stage[T](rt, g, len(src))
		if err != nil {
			return 0, err
		}
		if size > n {
			return 0, core.OutOfRange("upload of %d bytes into a %d-byte destination", size, n)
		}
		copy(s.data, src)
		st = s
		return rt.GraphAddCopyHtoD(g.h, hs, p, unsafe.Pointer(unsafe.SliceData(s.data)), size)
	})
	return n, st, err
}

// AddDownload adds a copy of all of src into pinned staging memory of the graph, sized to
// src; read it with Staged.Host once a launch has completed.
func AddDownload[T cuda.Numeric](ctx context.Context, g *Graph, deps Deps, src device.Mem) (*Node, *Staged[T], error) {
	if g == nil {
		return nil, nil, invalid("nil graph")
	}
	var zero T
	esize := uint64(unsafe.Sizeof(zero))
	var st *Staged[T]
	n, err := g.add(ctx, deps, CopyNode, "download", nil, func(rt backend.Device, hs []backend.GraphNode) (backend.GraphNode, error) {
		p, n, err := coreDev(g.dev).Resolve("download source", src)
		if err != nil {
			return 0, err
		}
		if n%esize != 0 {
			return 0, invalid("download source of %d bytes is not a whole number of %d-byte values", n, esize)
		}
		s, size, err := stage[T](rt, g, int(n/esize))
		if err != nil {
			return 0, err
		}
		st = s
		return rt.GraphAddCopyDtoH(g.h, hs, unsafe.Pointer(unsafe.SliceData(s.data)), p, size)
	})
	return n, st, err
}
