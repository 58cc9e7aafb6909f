package cudart

import (
	"runtime"
	"unsafe"

	"github.com/gpuactor/gpuactor/internal/backend"
)

// Reading and editing a graph's shape. 13.0 gave cudaGraphNodeGetDependencies,
// cudaGraphNodeGetDependentNodes and cudaGraphRemoveDependencies an edge-data parameter (the
// 12.3+ _v2 forms under the plain names); gpuactor makes ordinary edges only, so it passes
// NULL there, and before 13.0 calls the plain forms without it.

// nodeNeighbours calls a (node, nodes*, [edgeData*,] size_t*) lister twice: for the count,
// then the nodes.
func (r *Runtime) nodeNeighbours(id int, n backend.GraphNode) ([]backend.GraphNode, error) {
	call := func(out *backend.GraphNode, count *uintptr) error {
		if r.major >= 13 {
			return r.call(id, uintptr(n), uintptr(unsafe.Pointer(out)), 0, uintptr(unsafe.Pointer(count)))
		}
		return r.call(id, uintptr(n), uintptr(unsafe.Pointer(out)), uintptr(unsafe.Pointer(count)))
	}
	count := new(uintptr)
	if err := call(nil, count); err != nil || *count == 0 {
		return nil, err
	}
	out := make([]backend.GraphNode, *count)
	if err := call(&out[0], count); err != nil {
		return nil, err
	}
	return out[:min(int(*count), len(out))], nil
}

// GraphNodeDependencies lists the nodes n runs after (cudaGraphNodeGetDependencies).
func (r *Runtime) GraphNodeDependencies(n backend.GraphNode) ([]backend.GraphNode, error) {
	return r.nodeNeighbours(fnGraphNodeGetDependencies, n)
}

// GraphNodeDependents lists the nodes that run after n (cudaGraphNodeGetDependentNodes).
func (r *Runtime) GraphNodeDependents(n backend.GraphNode) ([]backend.GraphNode, error) {
	return r.nodeNeighbours(fnGraphNodeGetDependentNodes, n)
}

// GraphRemoveDependencies removes the edges from[i] → to[i] (cudaGraphRemoveDependencies).
func (r *Runtime) GraphRemoveDependencies(g backend.Graph, from, to []backend.GraphNode) error {
	if len(from) != len(to) || len(from) == 0 {
		return r.newError("cudaGraphRemoveDependencies", codeInvalidValue)
	}
	var err error
	if r.major >= 13 {
		err = r.call(fnGraphRemoveDependencies, uintptr(g), nodeList(from), nodeList(to), 0, uintptr(len(from)))
	} else {
		err = r.call(fnGraphRemoveDependencies, uintptr(g), nodeList(from), nodeList(to), uintptr(len(from)))
	}
	runtime.KeepAlive(from)
	runtime.KeepAlive(to)
	return err
}

// GraphDestroyNode removes n from its graph (cudaGraphDestroyNode).
func (r *Runtime) GraphDestroyNode(n backend.GraphNode) error {
	return r.call(fnGraphDestroyNode, uintptr(n))
}

// GraphNodeFindInClone is the node of clone copied from orig (cudaGraphNodeFindInClone).
func (r *Runtime) GraphNodeFindInClone(clone backend.Graph, orig backend.GraphNode) (backend.GraphNode, error) {
	var n uintptr
	err := r.call(fnGraphNodeFindInClone, uintptr(unsafe.Pointer(&n)), uintptr(orig), uintptr(clone))
	return backend.GraphNode(n), err
}

// GraphNodeEnabled reports whether n is enabled in x (cudaGraphNodeGetEnabled).
func (r *Runtime) GraphNodeEnabled(x backend.GraphExec, n backend.GraphNode) (bool, error) {
	var on uint32
	err := r.call(fnGraphNodeGetEnabled, uintptr(x), uintptr(n), uintptr(unsafe.Pointer(&on)))
	return on != 0, err
}
