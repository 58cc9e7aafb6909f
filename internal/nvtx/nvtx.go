// Package nvtx emits NVTX ranges and markers to a profiling tool (Nsight Systems) without the
// NVTX headers: it speaks the NVTX v3 injection protocol itself. A tool that wants NVTX names
// its injection library in NVTX_INJECTION64_PATH (nsys does, for the process it profiles);
// the package loads it on first use, hands it the function tables of the core module through
// the export-table callback, and calls what the tool fills in. With no tool, or on a platform
// without dlopen, every call is a no-op that costs one atomic load.
//
// Thread ranges (Push/Pop) belong to the OS thread that pushes them: the device actors' locked
// threads use them. Process ranges (Start/End) may end on any thread.
package nvtx

import (
	"context"
	"sync"
	"sync/atomic"
)

// state is what the loaded tool gave: nil until Init has run, then the tool's functions (all
// zero when no tool attached).
var (
	initOnce sync.Once
	active   atomic.Bool // a tool is attached and gave at least one function
)

// Active reports whether a tool is attached (loading it on first call).
func Active() bool {
	initOnce.Do(load)
	return active.Load()
}

type rangeKey struct{}

// WithRange returns ctx carrying name: the device operations sent with it run inside an NVTX
// range of that name on the device's thread.
func WithRange(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, rangeKey{}, name)
}

// RangeName is the range name ctx carries, "" for none.
func RangeName(ctx context.Context) string {
	if ctx == nil {
		return ""
	}
	s, _ := ctx.Value(rangeKey{}).(string)
	return s
}

// Named is RangeName when a tool is attached, else "" without looking at ctx: the check the
// operation path makes on every send.
func Named(ctx context.Context) string {
	if !Active() {
		return ""
	}
	return RangeName(ctx)
}
