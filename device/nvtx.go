package device

import (
	"context"

	"github.com/gpuactor/gpuactor/internal/nvtx"
)

// WithRange returns ctx carrying an NVTX range name: every stream operation sent with it
// (launches, graph launches, copies, memsets, records) runs inside a range of that name on
// its device's thread, so that it shows up named in Nsight Systems' timeline, under the
// thread named "gpuactor device N". Nested WithRange calls replace the name.
//
// The ranges reach a profiler attached through NVTX's injection protocol (nsys profile
// --trace=nvtx,cuda sets NVTX_INJECTION64_PATH); no NVTX library is needed. Without a profiler
// the name is ignored: sending an operation checks one atomic flag.
func WithRange(ctx context.Context, name string) context.Context { return nvtx.WithRange(ctx, name) }

// StartRange opens a process-wide NVTX range named name around host-side work, such as one
// request's handling, and returns the function that closes it, which may run on any
// goroutine. Without a profiler both are no-ops.
func StartRange(name string) (end func()) {
	id := nvtx.Start(name)
	return func() { nvtx.End(id) }
}

// Mark records an NVTX instant named name in the profiler's timeline (a no-op without one).
func Mark(name string) { nvtx.Mark(name) }

// Profiling reports whether a profiler takes NVTX ranges from this process.
func Profiling() bool { return nvtx.Active() }
