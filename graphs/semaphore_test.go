package graphs_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/graphs"
	"github.com/gpuactor/gpuactor/internal/testdev"
)

// notImported has graphs.Semaphore's method but was never imported by interop.
type notImported struct{ dev *device.Device }

func (n notImported) Device() *device.Device { return n.dev }

// Semaphore nodes on every backend: only semaphores imported by interop are taken (the
// simulator imports none, so every one given here is refused before the runtime sees it);
// the kind of node is checked; the device stays usable. interop's TestSemaphoreGraphNodes
// covers imported semaphores.
func TestSemaphoreNodeBadInput(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		g := f.graph(t)
		sem := graphs.SemaphoreOp{Semaphore: notImported{dev: f.Dev}, Value: 1}
		_, err := g.AddSemaphoreSignal(f.Ctx, nil, sem)
		require.ErrorIs(t, err, device.ErrClosed)
		_, err = g.AddSemaphoreWait(f.Ctx, nil, sem)
		require.ErrorIs(t, err, device.ErrClosed)
		_, err = g.AddSemaphoreWait(f.Ctx, nil)
		require.ErrorIs(t, err, device.ErrInvalidArgument, "no semaphores")
		_, err = g.AddSemaphoreSignal(f.Ctx, nil, graphs.SemaphoreOp{Value: 1})
		require.ErrorIs(t, err, device.ErrInvalidArgument, "nil semaphore")

		empty, err := g.AddEmpty(f.Ctx, nil)
		require.NoError(t, err)
		_, err = g.AddSemaphoreSignal(f.Ctx, graphs.After(empty, nil), sem)
		require.ErrorIs(t, err, device.ErrInvalidArgument, "nil dependency")
		_, err = empty.SemaphoreOps(f.Ctx)
		require.ErrorIs(t, err, graphs.ErrWrongKind)
		require.ErrorIs(t, empty.SetSemaphoreOps(f.Ctx, sem), graphs.ErrWrongKind)
		x, err := g.Instantiate(f.Ctx)
		require.NoError(t, err)
		require.ErrorIs(t, x.SetSemaphoreOps(f.Ctx, empty, sem), graphs.ErrWrongKind)
		require.ErrorIs(t, x.SetSemaphoreOps(f.Ctx, nil, sem), device.ErrInvalidArgument)
		var nilNode *graphs.Node
		require.ErrorIs(t, nilNode.SetSemaphoreOps(f.Ctx, sem), device.ErrInvalidArgument)

		require.NoError(t, x.Launch(f.Ctx, f.Stream(t)).Wait(f.Ctx))
		testdev.RequireUsable(t, f.Dev)
	})
}
