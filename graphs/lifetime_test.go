package graphs_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/graphs"
	"github.com/gpuactor/gpuactor/internal/testdev"
)

// Two graphs made each other's child free their pinned staging memory once both, and the
// executable graph made from one, are closed: what each holds of the other is the blocks the
// other had when it was taken, not the other's resources, so no cycle keeps them.
func TestGraphsEachOthersChildFreeTheirStaging(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		outA, outB := f.buffer(t, n), f.buffer(t, n)
		a, b := f.graph(t), f.graph(t)
		upA, _, err := graphs.AddUpload(f.Ctx, a, nil, outA, testdev.Filled(n, 3))
		require.NoError(t, err)
		upB, _, err := graphs.AddUpload(f.Ctx, b, nil, outB, testdev.Filled(n, 4))
		require.NoError(t, err)
		// After the uploads: no two copies into one buffer run at once.
		_, err = b.AddChild(f.Ctx, graphs.After(upB), a)
		require.NoError(t, err)
		_, err = a.AddChild(f.Ctx, graphs.After(upA), b)
		require.NoError(t, err)
		blocksA, blocksB := graphs.PinnedRefs(a), graphs.PinnedRefs(b)
		require.Len(t, blocksA(), 2, "a's block and b's")
		require.Len(t, blocksB(), 2, "b's block and a's")

		x, err := a.Instantiate(f.Ctx)
		require.NoError(t, err)
		require.NoError(t, a.Close(f.Ctx))
		require.NoError(t, b.Close(f.Ctx))
		for _, refs := range blocksA() {
			assert.Positive(t, refs, "the executable graph still reads both blocks")
		}
		f.launch(t, x, f.Stream(t))
		assert.Equal(t, testdev.Filled(n, 3), f.read(t, outA))
		assert.Equal(t, testdev.Filled(n, 4), f.read(t, outB))

		require.NoError(t, x.Close(f.Ctx))
		assert.Equal(t, []int{0, 0}, blocksA(), "every block freed")
		assert.Equal(t, []int{0, 0}, blocksB())
	})
}
