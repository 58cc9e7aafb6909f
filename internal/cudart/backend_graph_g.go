package cudart

import "github.com/gpuactor/gpuactor/internal/backend"

// The device's topology, instantiation and graph memory calls (graph_topology.go,
// graph_instantiate.go, graph_mem.go).

func (d *device) GraphNodeDependencies(n backend.GraphNode) ([]backend.GraphNode, error) {
	return d.rt.GraphNodeDependencies(n)
}

func (d *device) GraphNodeDependents(n backend.GraphNode) ([]backend.GraphNode, error) {
	return d.rt.GraphNodeDependents(n)
}

func (d *device) GraphRemoveDependencies(g backend.Graph, from, to []backend.GraphNode) error {
	return d.rt.GraphRemoveDependencies(g, from, to)
}

// GraphDestroyNode removes the node; a host node's function stays held by the graph until the
// graph is destroyed, as the runtime gives no way to tell which function the node called.
func (d *device) GraphDestroyNode(n backend.GraphNode) error { return d.rt.GraphDestroyNode(n) }

func (d *device) GraphNodeFindInClone(clone backend.Graph, orig backend.GraphNode) (backend.GraphNode, error) {
	return d.rt.GraphNodeFindInClone(clone, orig)
}

func (d *device) GraphNodeEnabled(x backend.GraphExec, n backend.GraphNode) (bool, error) {
	return d.rt.GraphNodeEnabled(x, n)
}

// GraphInstantiateWithParams instantiates through cudaGraphInstantiateWithParams, or on a
// runtime without it (11.x) through cudaGraphInstantiateWithFlags and cudaGraphUpload. The
// executable graph holds the graph's host functions, as GraphInstantiate's does.
func (d *device) GraphInstantiateWithParams(g backend.Graph, flags uint64, upload Stream) (backend.GraphExec, backend.InstantiateInfo, error) {
	if !d.rt.HasInstantiateWithParams() {
		x, err := d.GraphInstantiate(g, flags&^backend.InstantiateUpload)
		if err != nil {
			return 0, backend.InstantiateInfo{Result: backend.InstantiateError}, err
		}
		if flags&backend.InstantiateUpload != 0 {
			if err := d.GraphUpload(x, upload); err != nil {
				_ = d.GraphExecDestroy(x)
				return 0, backend.InstantiateInfo{Result: backend.InstantiateError}, err
			}
		}
		return x, backend.InstantiateInfo{}, nil
	}
	x, info, err := d.rt.GraphInstantiateWithParams(g, flags, upload)
	if err != nil {
		return 0, info, err
	}
	d.graphs.init()
	var hosts []uintptr
	d.inherit(d.graphs.graphs[g], &hosts)
	d.graphs.execs[x] = hosts
	return x, info, nil
}

func (d *device) GraphExecFlags(x backend.GraphExec) (uint64, error) { return d.rt.GraphExecFlags(x) }

func (d *device) GraphDebugDotFlags(g backend.Graph, path string, flags uint32) error {
	return d.rt.GraphDebugDotFlags(g, path, flags)
}

func (d *device) GraphMemTrim() error { return d.rt.GraphMemTrim(d.ordinal) }

func (d *device) GraphMemAttribute(attr backend.GraphMemAttr) (uint64, error) {
	return d.rt.GraphMemAttribute(d.ordinal, attr)
}

func (d *device) SetGraphMemAttribute(attr backend.GraphMemAttr, value uint64) error {
	return d.rt.SetGraphMemAttribute(d.ordinal, attr, value)
}

func (d *device) UserObjectCreate(destroy func()) (backend.UserObject, error) {
	return d.rt.UserObjectCreate(destroy)
}

func (d *device) UserObjectRetain(o backend.UserObject, count uint32) error {
	return d.rt.UserObjectRetain(o, count)
}

func (d *device) UserObjectRelease(o backend.UserObject, count uint32) error {
	return d.rt.UserObjectRelease(o, count)
}

func (d *device) GraphRetainUserObject(g backend.Graph, o backend.UserObject, count uint32, move bool) error {
	return d.rt.GraphRetainUserObject(g, o, count, move)
}

func (d *device) GraphReleaseUserObject(g backend.Graph, o backend.UserObject, count uint32) error {
	return d.rt.GraphReleaseUserObject(g, o, count)
}
