//go:build linux

package interop_test

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/graphs"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/interop"
	"github.com/gpuactor/gpuactor/streams"
)

// The model's semaphore nodes are empty nodes of the simulator's graph whose lists the model
// keeps, checking that every semaphore given is live (a destroyed one is a fault).

func (d *extDevice) liveSems(op string, ops []backend.SemaphoreOp) error {
	d.st.mu.Lock()
	defer d.st.mu.Unlock()
	if len(ops) == 0 {
		d.st.fault("%s with no semaphores", op)
		return cudaerr.New(op, cudaerr.InvalidValue)
	}
	for _, o := range ops {
		if !d.st.sems[o.Sem] {
			d.st.fault("%s given destroyed semaphore %#x", op, o.Sem)
			return cudaerr.New(op, cudaerr.InvalidValue)
		}
	}
	return nil
}

func (d *extDevice) addSemNode(op string, g backend.Graph, deps []backend.GraphNode, ops []backend.SemaphoreOp) (backend.GraphNode, error) {
	if err := d.liveSems(op, ops); err != nil {
		return 0, err
	}
	n, err := d.Device.GraphAddEmptyNode(g, deps)
	if err != nil {
		return 0, err
	}
	d.st.mu.Lock()
	d.st.semNodes[n] = slices.Clone(ops)
	d.st.mu.Unlock()
	return n, nil
}

func (d *extDevice) semNode(op string, n backend.GraphNode) ([]backend.SemaphoreOp, error) {
	d.st.mu.Lock()
	defer d.st.mu.Unlock()
	ops, ok := d.st.semNodes[n]
	if !ok {
		return nil, cudaerr.New(op, cudaerr.InvalidValue)
	}
	return slices.Clone(ops), nil
}

func (d *extDevice) setSemNode(op string, n backend.GraphNode, ops []backend.SemaphoreOp) error {
	if err := d.liveSems(op, ops); err != nil {
		return err
	}
	d.st.mu.Lock()
	defer d.st.mu.Unlock()
	if _, ok := d.st.semNodes[n]; !ok {
		return cudaerr.New(op, cudaerr.InvalidValue)
	}
	d.st.semNodes[n] = slices.Clone(ops)
	return nil
}

func (d *extDevice) setExecSemNode(op string, x backend.GraphExec, n backend.GraphNode, ops []backend.SemaphoreOp) error {
	if err := d.liveSems(op, ops); err != nil {
		return err
	}
	d.st.mu.Lock()
	defer d.st.mu.Unlock()
	d.st.execSems[[2]uintptr{uintptr(x), uintptr(n)}] = slices.Clone(ops)
	return nil
}

func (d *extDevice) GraphAddExternalSemaphoresSignalNode(g backend.Graph, deps []backend.GraphNode, ops []backend.SemaphoreOp) (backend.GraphNode, error) {
	return d.addSemNode("cudaGraphAddExternalSemaphoresSignalNode", g, deps, ops)
}

func (d *extDevice) GraphAddExternalSemaphoresWaitNode(g backend.Graph, deps []backend.GraphNode, ops []backend.SemaphoreOp) (backend.GraphNode, error) {
	return d.addSemNode("cudaGraphAddExternalSemaphoresWaitNode", g, deps, ops)
}

func (d *extDevice) GraphExternalSemaphoresSignalNodeGetParams(n backend.GraphNode) ([]backend.SemaphoreOp, error) {
	return d.semNode("cudaGraphExternalSemaphoresSignalNodeGetParams", n)
}

func (d *extDevice) GraphExternalSemaphoresWaitNodeGetParams(n backend.GraphNode) ([]backend.SemaphoreOp, error) {
	return d.semNode("cudaGraphExternalSemaphoresWaitNodeGetParams", n)
}

func (d *extDevice) GraphExternalSemaphoresSignalNodeSetParams(n backend.GraphNode, ops []backend.SemaphoreOp) error {
	return d.setSemNode("cudaGraphExternalSemaphoresSignalNodeSetParams", n, ops)
}

func (d *extDevice) GraphExternalSemaphoresWaitNodeSetParams(n backend.GraphNode, ops []backend.SemaphoreOp) error {
	return d.setSemNode("cudaGraphExternalSemaphoresWaitNodeSetParams", n, ops)
}

func (d *extDevice) GraphExecExternalSemaphoresSignalNodeSetParams(x backend.GraphExec, n backend.GraphNode, ops []backend.SemaphoreOp) error {
	return d.setExecSemNode("cudaGraphExecExternalSemaphoresSignalNodeSetParams", x, n, ops)
}

func (d *extDevice) GraphExecExternalSemaphoresWaitNodeSetParams(x backend.GraphExec, n backend.GraphNode, ops []backend.SemaphoreOp) error {
	return d.setExecSemNode("cudaGraphExecExternalSemaphoresWaitNodeSetParams", x, n, ops)
}

// fakeSemaphore has the method graphs.Semaphore asks for but is no imported semaphore.
type fakeSemaphore struct{ dev *device.Device }

func (f fakeSemaphore) Device() *device.Device { return f.dev }

// uncomparable cannot be a map key: it must be refused, not panic.
type uncomparable struct {
	dev *device.Device
	_   []int
}

func (u uncomparable) Device() *device.Device { return u.dev }

// TestSemaphoreGraphNodes: interop's semaphores go into graph nodes, their lists read back as
// given and set on the graph and its Exec, and closing one refuses later launches; bad input
// is refused before the runtime sees it and leaves the device usable.
func TestSemaphoreGraphNodes(t *testing.T) {
	ctx := testdev.Ctx(t)
	dev, st := openExt(t)
	f := externalFile(t)
	a, err := interop.ImportSemaphore(ctx, dev, int(f.Fd()), interop.TimelineSemaphore)
	require.NoError(t, err)
	b, err := interop.ImportSemaphore(ctx, dev, int(f.Fd()), interop.BinarySemaphore)
	require.NoError(t, err)

	g, err := graphs.New(ctx, dev)
	require.NoError(t, err)
	sig, err := g.AddSemaphoreSignal(ctx, nil, graphs.SemaphoreOp{Semaphore: a, Value: 5})
	require.NoError(t, err)
	assert.Equal(t, graphs.SemaphoreSignalNode, sig.Kind())
	wait, err := g.AddSemaphoreWait(ctx, graphs.After(sig), graphs.SemaphoreOp{Semaphore: b}, graphs.SemaphoreOp{Semaphore: a, Value: 4})
	require.NoError(t, err)
	assert.Equal(t, graphs.SemaphoreWaitNode, wait.Kind())

	ops, err := sig.SemaphoreOps(ctx)
	require.NoError(t, err)
	assert.Equal(t, []graphs.SemaphoreOp{{Semaphore: a, Value: 5}}, ops)
	ops, err = wait.SemaphoreOps(ctx)
	require.NoError(t, err)
	assert.Equal(t, []graphs.SemaphoreOp{{Semaphore: b}, {Semaphore: a, Value: 4}}, ops)

	require.NoError(t, sig.SetSemaphoreOps(ctx, graphs.SemaphoreOp{Semaphore: b, Value: 9}, graphs.SemaphoreOp{Semaphore: a, Value: 10}))
	ops, err = sig.SemaphoreOps(ctx)
	require.NoError(t, err)
	assert.Equal(t, []graphs.SemaphoreOp{{Semaphore: b, Value: 9}, {Semaphore: a, Value: 10}}, ops)

	x, err := g.Instantiate(ctx)
	require.NoError(t, err)
	require.NoError(t, x.SetSemaphoreOps(ctx, wait, graphs.SemaphoreOp{Semaphore: a, Value: 11}))
	st.mu.Lock()
	var execOps []backend.SemaphoreOp
	for _, v := range st.execSems {
		execOps = v
	}
	assert.Len(t, st.execSems, 1)
	st.mu.Unlock()
	require.Len(t, execOps, 1)
	assert.Equal(t, uint64(11), execOps[0].Value)
	s, err := streams.New(ctx, dev)
	require.NoError(t, err)
	require.NoError(t, x.Launch(ctx, s).Wait(ctx))

	// Bad input: refused with the error naming it; nothing reaches the runtime.
	_, err = g.AddSemaphoreSignal(ctx, nil)
	require.ErrorIs(t, err, core.ErrInvalidArgument)
	_, err = g.AddSemaphoreSignal(ctx, nil, graphs.SemaphoreOp{})
	require.ErrorIs(t, err, core.ErrInvalidArgument)
	var nilSem *interop.ExternalSemaphore
	_, err = g.AddSemaphoreWait(ctx, nil, graphs.SemaphoreOp{Semaphore: nilSem})
	require.ErrorIs(t, err, core.ErrInvalidArgument)
	_, err = g.AddSemaphoreWait(ctx, nil, graphs.SemaphoreOp{Semaphore: uncomparable{dev: dev}})
	require.ErrorIs(t, err, core.ErrInvalidArgument)
	_, err = g.AddSemaphoreWait(ctx, nil, graphs.SemaphoreOp{Semaphore: fakeSemaphore{dev: dev}})
	require.ErrorIs(t, err, core.ErrClosed)
	other, _ := simDevice(t, ctx)
	_, err = g.AddSemaphoreSignal(ctx, nil, graphs.SemaphoreOp{Semaphore: fakeSemaphore{dev: other}})
	require.ErrorIs(t, err, core.ErrWrongDevice)
	og, err := graphs.New(ctx, other)
	require.NoError(t, err)
	_, err = og.AddSemaphoreSignal(ctx, nil, graphs.SemaphoreOp{Semaphore: a})
	require.ErrorIs(t, err, core.ErrWrongDevice)
	require.ErrorIs(t, x.SetSemaphoreOps(ctx, wait, graphs.SemaphoreOp{Semaphore: fakeSemaphore{dev: other}}), core.ErrWrongDevice)
	empty, err := g.AddEmpty(ctx, nil)
	require.NoError(t, err)
	_, err = empty.SemaphoreOps(ctx)
	require.ErrorIs(t, err, graphs.ErrWrongKind)
	require.ErrorIs(t, empty.SetSemaphoreOps(ctx, graphs.SemaphoreOp{Semaphore: a}), graphs.ErrWrongKind)
	require.ErrorIs(t, x.SetSemaphoreOps(ctx, sig), core.ErrInvalidArgument)
	var nilGraph *graphs.Graph
	_, err = nilGraph.AddSemaphoreSignal(ctx, nil, graphs.SemaphoreOp{Semaphore: a})
	require.ErrorIs(t, err, core.ErrInvalidArgument)

	// Closing a semaphore the graph uses: launches are refused, the semaphore is refused for
	// new nodes and the node's list cannot name it any more; the device stays usable.
	require.NoError(t, a.Close(ctx))
	require.ErrorIs(t, x.Launch(ctx, s).Wait(ctx), core.ErrClosed)
	_, err = g.AddSemaphoreSignal(ctx, nil, graphs.SemaphoreOp{Semaphore: a, Value: 12})
	require.ErrorIs(t, err, core.ErrClosed)
	require.ErrorIs(t, wait.SetSemaphoreOps(ctx, graphs.SemaphoreOp{Semaphore: a}), core.ErrClosed)
	_, err = wait.SemaphoreOps(ctx)
	require.ErrorIs(t, err, core.ErrClosed)
	_, err = g.AddSemaphoreSignal(ctx, nil, graphs.SemaphoreOp{Semaphore: b, Value: 1})
	require.NoError(t, err)
	require.NoError(t, x.Close(ctx))
	require.NoError(t, g.Close(ctx))

	// Each way of giving a graph a semaphore holds it: added, set on a node, set on an Exec.
	for name, give := range map[string]func(g *graphs.Graph, n *graphs.Node, x *graphs.Exec, sem *interop.ExternalSemaphore) error{
		"added": func(g *graphs.Graph, _ *graphs.Node, _ *graphs.Exec, sem *interop.ExternalSemaphore) error {
			_, err := g.AddSemaphoreWait(ctx, nil, graphs.SemaphoreOp{Semaphore: sem})
			return err
		},
		"set on the node": func(_ *graphs.Graph, n *graphs.Node, _ *graphs.Exec, sem *interop.ExternalSemaphore) error {
			return n.SetSemaphoreOps(ctx, graphs.SemaphoreOp{Semaphore: sem})
		},
		"set on the Exec": func(_ *graphs.Graph, n *graphs.Node, x *graphs.Exec, sem *interop.ExternalSemaphore) error {
			return x.SetSemaphoreOps(ctx, n, graphs.SemaphoreOp{Semaphore: sem})
		},
	} {
		c, err := interop.ImportSemaphore(ctx, dev, int(f.Fd()), interop.BinarySemaphore)
		require.NoError(t, err)
		g, err := graphs.New(ctx, dev)
		require.NoError(t, err)
		n, err := g.AddSemaphoreSignal(ctx, nil, graphs.SemaphoreOp{Semaphore: b})
		require.NoError(t, err)
		x, err := g.Instantiate(ctx)
		require.NoError(t, err)
		require.NoError(t, give(g, n, x, c), name)
		require.NoError(t, x.Launch(ctx, s).Wait(ctx), name)
		require.NoError(t, c.Close(ctx), name)
		require.ErrorIs(t, x.Launch(ctx, s).Wait(ctx), core.ErrClosed, name)
		require.NoError(t, x.Close(ctx))
		require.NoError(t, g.Close(ctx))
	}
	require.NoError(t, s.Synchronize(ctx))
}
