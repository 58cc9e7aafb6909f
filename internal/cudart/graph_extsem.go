package cudart

import (
	"runtime"
	"structs"
	"unsafe"

	"github.com/gpuactor/gpuactor/internal/backend"
)

// External semaphore nodes. The 11.4 to 13.0 headers lay struct
// cudaExternalSemaphoreSignalNodeParams and cudaExternalSemaphoreWaitNodeParams out alike, as
// extSemNodeParams (24 bytes): the semaphores' handles, their parameters (the 144-byte
// externalSemaphoreParams of external.go, the form the runtime's graph calls take from 11.4
// on) and how many there are. The runtime copies both arrays during the Add and Set calls;
// the arrays a GetParams returns are the node's.
type extSemNodeParams struct {
	_      structs.HostLayout
	sems   unsafe.Pointer // cudaExternalSemaphore_t*
	params unsafe.Pointer // const struct cudaExternalSemaphore{Signal,Wait}Params*
	n      uint32
	_      uint32
}

// extSemNode packs ops; the arrays stay referenced from the result, to be kept alive across
// the call.
func extSemNode(ops []backend.SemaphoreOp) *extSemNodeParams {
	p := &extSemNodeParams{n: uint32(len(ops))}
	if len(ops) == 0 {
		return p
	}
	sems := make([]uintptr, len(ops))
	params := make([]externalSemaphoreParams, len(ops))
	for i, op := range ops {
		sems[i], params[i].fenceValue = uintptr(op.Sem), op.Value
	}
	p.sems, p.params = unsafe.Pointer(&sems[0]), unsafe.Pointer(&params[0])
	return p
}

// ops reads a node's arrays back.
func (p *extSemNodeParams) ops() []backend.SemaphoreOp {
	if p.n == 0 || p.sems == nil || p.params == nil {
		return nil
	}
	sems := unsafe.Slice((*uintptr)(p.sems), p.n)
	params := unsafe.Slice((*externalSemaphoreParams)(p.params), p.n)
	out := make([]backend.SemaphoreOp, p.n)
	for i := range out {
		out[i] = backend.SemaphoreOp{Sem: backend.ExternalSemaphore(sems[i]), Value: params[i].fenceValue}
	}
	return out
}

func (d *device) addExtSemNode(fn int, g backend.Graph, deps []backend.GraphNode, ops []backend.SemaphoreOp) (backend.GraphNode, error) {
	var node uintptr
	p := extSemNode(ops)
	err := d.rt.call(fn, uintptr(unsafe.Pointer(&node)), uintptr(g), nodeList(deps), uintptr(len(deps)), uintptr(unsafe.Pointer(p)))
	runtime.KeepAlive(p)
	runtime.KeepAlive(deps)
	return backend.GraphNode(node), err
}

func (d *device) getExtSemNode(fn int, n backend.GraphNode) ([]backend.SemaphoreOp, error) {
	p := new(extSemNodeParams)
	if err := d.rt.call(fn, uintptr(n), uintptr(unsafe.Pointer(p))); err != nil {
		return nil, err
	}
	return p.ops(), nil
}

// setExtSemNode sets node n's list through fn: of x when exec is set (the Exec form takes x
// first), else of the graph's node.
func (d *device) setExtSemNode(fn int, exec bool, x backend.GraphExec, n backend.GraphNode, ops []backend.SemaphoreOp) error {
	p := extSemNode(ops)
	var err error
	if exec {
		err = d.rt.call(fn, uintptr(x), uintptr(n), uintptr(unsafe.Pointer(p)))
	} else {
		err = d.rt.call(fn, uintptr(n), uintptr(unsafe.Pointer(p)))
	}
	runtime.KeepAlive(p)
	return err
}

func (d *device) GraphAddExternalSemaphoresSignalNode(g backend.Graph, deps []backend.GraphNode, ops []backend.SemaphoreOp) (backend.GraphNode, error) {
	return d.addExtSemNode(fnGraphAddExternalSemaphoresSignalNode, g, deps, ops)
}

func (d *device) GraphAddExternalSemaphoresWaitNode(g backend.Graph, deps []backend.GraphNode, ops []backend.SemaphoreOp) (backend.GraphNode, error) {
	return d.addExtSemNode(fnGraphAddExternalSemaphoresWaitNode, g, deps, ops)
}

func (d *device) GraphExternalSemaphoresSignalNodeGetParams(n backend.GraphNode) ([]backend.SemaphoreOp, error) {
	return d.getExtSemNode(fnGraphExternalSemaphoresSignalNodeGetParams, n)
}

func (d *device) GraphExternalSemaphoresWaitNodeGetParams(n backend.GraphNode) ([]backend.SemaphoreOp, error) {
	return d.getExtSemNode(fnGraphExternalSemaphoresWaitNodeGetParams, n)
}

func (d *device) GraphExternalSemaphoresSignalNodeSetParams(n backend.GraphNode, ops []backend.SemaphoreOp) error {
	return d.setExtSemNode(fnGraphExternalSemaphoresSignalNodeSetParams, false, 0, n, ops)
}

func (d *device) GraphExternalSemaphoresWaitNodeSetParams(n backend.GraphNode, ops []backend.SemaphoreOp) error {
	return d.setExtSemNode(fnGraphExternalSemaphoresWaitNodeSetParams, false, 0, n, ops)
}

func (d *device) GraphExecExternalSemaphoresSignalNodeSetParams(x backend.GraphExec, n backend.GraphNode, ops []backend.SemaphoreOp) error {
	return d.setExtSemNode(fnGraphExecExternalSemaphoresSignalNodeSetParams, true, x, n, ops)
}

func (d *device) GraphExecExternalSemaphoresWaitNodeSetParams(x backend.GraphExec, n backend.GraphNode, ops []backend.SemaphoreOp) error {
	return d.setExtSemNode(fnGraphExecExternalSemaphoresWaitNodeSetParams, true, x, n, ops)
}
