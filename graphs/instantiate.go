package graphs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
)

// InstantiateError is a refused Instantiate: why the graph cannot be made executable, and the
// node at fault when the runtime names one. It unwraps to the runtime's error.
type InstantiateError struct {
	Reason string // what is wrong, e.g. a node a device-launchable graph cannot hold
	Node   *Node  // the node at fault, when known
	Err    error  // the runtime's error
}

func (e *InstantiateError) Error() string {
	if e == nil {
		return "gpuactor/graphs: <nil InstantiateError>"
	}
	if e.Node != nil {
		return fmt.Sprintf("gpuactor/graphs: instantiating a graph: %s (at %s): %v", e.Reason, e.Node, e.Err)
	}
	return fmt.Sprintf("gpuactor/graphs: instantiating a graph: %s: %v", e.Reason, e.Err)
}

// Unwrap returns the runtime's error.
func (e *InstantiateError) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.Err
}

// instantiate makes the executable graph of g with flags; on the actor thread.
func (g *Graph) instantiate(rt backend.Device, flags uint64) (backend.GraphExec, error) {
	h, info, err := rt.GraphInstantiateWithParams(g.h, flags, 0)
	if err == nil {
		return h, nil
	}
	ie := &InstantiateError{Reason: info.Result.String(), Err: err}
	if info.ErrorNode != 0 {
		ie.Node, _ = g.node(rt, info.ErrorNode)
	}
	return 0, ie
}

// ExecFlags is how an Exec was instantiated.
type ExecFlags struct {
	AutoFreeOnLaunch bool // AutoFreeOnLaunch
	Upload           bool // uploaded by the instantiation itself
	DeviceLaunch     bool // DeviceLaunch
}

// Flags reports the options the Exec was instantiated with, as the runtime keeps them
// (cudaGraphExecGetFlags, CUDA 12.0 and later). UseNodePriority is not among them: the
// runtime honours it but does not report it.
func (x *Exec) Flags(ctx context.Context) (ExecFlags, error) {
	var f uint64
	err := x.run(ctx, func(rt backend.Device, _ *core.Tracker) error {
		var err error
		f, err = rt.GraphExecFlags(x.h)
		return err
	})
	return ExecFlags{
		AutoFreeOnLaunch: f&backend.InstantiateAutoFreeOnLaunch != 0,
		Upload:           f&backend.InstantiateUpload != 0,
		DeviceLaunch:     f&backend.InstantiateDeviceLaunch != 0,
	}, err
}

// DotFlag selects what DebugDOT writes about each node (cudaGraphDebugDotFlags).
type DotFlag uint32

// DOT detail flags.
const (
	DotVerbose                     = DotFlag(backend.DotVerbose) // everything below
	DotKernelParams                = DotFlag(backend.DotKernelNodeParams)
	DotCopyParams                  = DotFlag(backend.DotMemcpyNodeParams)
	DotMemsetParams                = DotFlag(backend.DotMemsetNodeParams)
	DotHostParams                  = DotFlag(backend.DotHostNodeParams)
	DotEventParams                 = DotFlag(backend.DotEventNodeParams)
	DotExtSemaSignalParams         = DotFlag(backend.DotExtSemasSignalNodeParams)
	DotExtSemaWaitParams           = DotFlag(backend.DotExtSemasWaitNodeParams)
	DotKernelAttributes            = DotFlag(backend.DotKernelNodeAttributes)
	DotHandles                     = DotFlag(backend.DotHandles)
	DotConditionalParams           = DotFlag(backend.DotConditionalNodeParams)
	dotAll                 DotFlag = DotFlag(backend.DotAll)
)

// DebugDOT is the graph in Graphviz DOT as the runtime writes it (cudaGraphDebugDotPrint),
// with the detail flags select (0: the runtime's terse form); DOT is DebugDOT(DotVerbose).
// It returns once the text is written and read back.
func (g *Graph) DebugDOT(ctx context.Context, flags DotFlag) (string, error) {
	if flags&^dotAll != 0 {
		return "", invalid("DebugDOT: unknown DOT flags %#x", uint32(flags&^dotAll))
	}
	dir, err := os.MkdirTemp("", "gpuactor-graph-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "graph.dot")
	if _, err := exec(ctx, g, func(rt backend.Device, _ *core.Tracker) (struct{}, error) {
		return struct{}{}, rt.GraphDebugDotFlags(g.h, path, uint32(flags))
	}); err != nil {
		return "", fmt.Errorf("gpuactor/graphs: DOT export: %w", err)
	}
	b, err := os.ReadFile(path)
	return string(b), err
}
