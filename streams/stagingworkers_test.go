package streams

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
)

func TestStagingWorkersReportsTheRingsChoice(t *testing.T) {
	stagingBackends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		dev := stagingOpen(t, opts)
		s := stagingStream(t, dev)
		up, down := s.StagingWorkers()
		assert.Zero(t, up+down, "no ring before the first staged copy")
		buf := stagingMalloc(t, dev, 1<<10)
		stagingAwait(t, CopyToDevice(ctx, s, buf, make([]byte, 1<<10)))
		up, down = s.StagingWorkers()
		p := stagingParamsFor(0)
		assert.Equal(t, p.workers, up, "the count sized to the host")
		assert.Equal(t, p.downWorkers, down)

		fixed, err := New(ctx, dev, StagingWorkers(3))
		require.NoError(t, err)
		defer fixed.Close(ctx)
		stagingAwait(t, CopyToDevice(ctx, fixed, buf, make([]byte, 1<<10)))
		up, down = fixed.StagingWorkers()
		assert.Equal(t, [2]int{3, 3}, [2]int{up, down})
	})
}
