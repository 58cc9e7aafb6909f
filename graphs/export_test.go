package graphs

import "github.com/gpuactor/gpuactor/internal/backend"

// HandleOf is x's executable graph handle, for benchmarks that drive it through the binding.
func HandleOf(x *Exec) backend.GraphExec { return x.h }

// ReplayAwaitSpin is replayAwaitSpin, the Await spin of a LaunchN future.
var ReplayAwaitSpin = replayAwaitSpin
