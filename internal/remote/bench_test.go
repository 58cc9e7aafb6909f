//go:build linux

package remote_test

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/internal/backend"
)

// BenchmarkStreamQuery is one small call's round trip: a StreamQuery (a 16-byte request and an
// empty answer) on the simulator in process, and through the remote backend to a worker
// serving the same simulator.
func BenchmarkStreamQuery(b *testing.B) {
	run := func(b *testing.B, dv backend.Device) {
		s, err := dv.StreamCreate(backend.StreamDefault, 0)
		require.NoError(b, err)
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			if err := dv.StreamQuery(s); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		require.NoError(b, dv.StreamDestroy(s))
	}
	b.Run("in-process", func(b *testing.B) {
		dv, err := newSim().Open(0)
		require.NoError(b, err)
		run(b, dv)
	})
	b.Run("remote", func(b *testing.B) {
		_, dv := open(b)
		run(b, dv)
	})
	// The caller on a locked thread, as a device actor is: a reply then wakes a goroutine
	// that only its own thread may run.
	b.Run("remote-locked-caller", func(b *testing.B) {
		_, dv := open(b)
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		run(b, dv)
	})
}

// BenchmarkLaunchSizedCall is a call with a launch's arguments (kernel, grid, block, shared
// memory, stream and four arguments: about 150 bytes) through the remote backend: the
// worker's simulator refuses the unknown kernel, so this measures the wire, the worker's
// dispatch and an error's way back.
func BenchmarkLaunchSizedCall(b *testing.B) {
	_, dv := open(b)
	args := []backend.Arg{{Kind: backend.ArgPtr, Bits: 1}, {Kind: backend.ArgPtr, Bits: 2}, {Kind: backend.ArgFloat32, Bits: 3}, {Kind: backend.ArgInt32, Bits: 4}}
	grid, block := backend.Dim3{X: 1024, Y: 1, Z: 1}, backend.Dim3{X: 256, Y: 1, Z: 1}
	b.ReportAllocs()
	for b.Loop() {
		_ = dv.Launch(1, grid, block, 0, 0, args)
	}
}
