package graphs

import (
	"slices"
	"time"

	"github.com/gpuactor/gpuactor/internal/backend"
)

// HandleOf is x's executable graph handle, for benchmarks that drive it through the binding.
func HandleOf(x *Exec) backend.GraphExec { return x.h }

// ReplayAwaitSpin is replayAwaitSpin, the Await spin of a LaunchN future.
var ReplayAwaitSpin = replayAwaitSpin

// SetLaunchChunk makes x's LaunchN queue n runs a message (0: as many as its launch cost fits
// in launchBudget).
func SetLaunchChunk(x *Exec, n int) { x.chunk = n }

// ChunkSize is how many runs x's next LaunchN sends a message.
func ChunkSize(x *Exec) int { return x.chunkSize() }

// RunCost is what a run of x cost to launch in its last LaunchN message.
func RunCost(x *Exec) time.Duration { return time.Duration(x.runCost.Load()) }

// PinnedRefs returns a function reporting, later, how many holders each pinned staging block
// g holds now has (0: freed).
func PinnedRefs(g *Graph) func() []int {
	blocks := slices.Clone(g.res.pinned)
	return func() []int {
		out := make([]int, len(blocks))
		for i, m := range blocks {
			out[i] = m.refs
		}
		return out
	}
}
