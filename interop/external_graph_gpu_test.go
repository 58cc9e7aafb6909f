//go:build linux

package interop_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/graphs"
	"github.com/gpuactor/gpuactor/internal/core"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/interop"
	"github.com/gpuactor/gpuactor/streams"
)

// The Vulkan exporter's protocol (TestExternalVulkanMemoryAndTimeline) run through graph
// nodes: a wait node set to 1 on the Exec waits for Vulkan's fill, the stream checks and
// rewrites the memory, and a signal node set to 2 on the graph releases Vulkan, which checks
// the writes. A wrong value hangs the exporter or reads the memory before it is filled.
func TestExternalVulkanTimelineInGraph(t *testing.T) {
	ctx := testdev.Ctx(t)
	dev := openExternalGPU(t, ctx)
	e := startExporter(t, "vk_exporter", 2)
	require.Equal(t, "vk", e.kind)
	var opts []interop.ImportOption
	if len(e.fields) > 3 && e.fields[3] == "dedicated" {
		opts = append(opts, interop.Dedicated())
	}
	m, err := interop.ImportMemory(ctx, dev, e.fds[0], e.size, opts...)
	require.NoError(t, err)
	sem, err := interop.ImportSemaphore(ctx, dev, e.fds[1], interop.TimelineSemaphore)
	require.NoError(t, err)
	s, err := streams.New(ctx, dev)
	require.NoError(t, err)
	buf, err := m.MapBuffer(ctx, 0, e.words*4)
	require.NoError(t, err)

	gw, err := graphs.New(ctx, dev)
	require.NoError(t, err)
	w, err := gw.AddSemaphoreWait(ctx, nil, graphs.SemaphoreOp{Semaphore: sem, Value: 100})
	require.NoError(t, err)
	xw, err := gw.Instantiate(ctx)
	require.NoError(t, err)
	require.NoError(t, xw.SetSemaphoreOps(ctx, w, graphs.SemaphoreOp{Semaphore: sem, Value: 1}))

	gs, err := graphs.New(ctx, dev)
	require.NoError(t, err)
	sig, err := gs.AddSemaphoreSignal(ctx, nil, graphs.SemaphoreOp{Semaphore: sem, Value: 7})
	require.NoError(t, err)
	require.NoError(t, sig.SetSemaphoreOps(ctx, graphs.SemaphoreOp{Semaphore: sem, Value: 2}))
	ops, err := sig.SemaphoreOps(ctx)
	require.NoError(t, err)
	assert.Equal(t, []graphs.SemaphoreOp{{Semaphore: sem, Value: 2}}, ops)
	xs, err := gs.Instantiate(ctx)
	require.NoError(t, err)

	require.NoError(t, xw.Launch(ctx, s).Wait(ctx), "Vulkan signals 1 once the memory is filled")
	checkAndRewrite(t, ctx, s, buf, e.words)
	require.NoError(t, xs.Launch(ctx, s).Wait(ctx))
	e.finish(t)

	require.NoError(t, sem.Close(ctx))
	require.ErrorIs(t, xs.Launch(ctx, s).Wait(ctx), core.ErrClosed)
	require.NoError(t, xw.Close(ctx))
	require.NoError(t, xs.Close(ctx))
	require.NoError(t, gw.Close(ctx))
	require.NoError(t, gs.Close(ctx))
	require.NoError(t, m.Close(ctx))
}
