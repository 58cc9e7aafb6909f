//go:build linux

package remote_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// TestSameAnswersAsInProcess runs the same calls on the simulator in process and through a
// worker serving an identical one (the simulator is deterministic, so handles and addresses
// agree) and compares every result and error: what crosses the wire must not change them.
func TestSameAnswersAsInProcess(t *testing.T) {
	_, rdv := open(t)
	ldv, err := newSim().Open(0)
	require.NoError(t, err)

	steps := []struct {
		name string
		run  func(dv backend.Device) (any, error)
	}{
		{"Malloc", func(dv backend.Device) (any, error) { return dv.Malloc(1 << 16) }},
		{"MallocTooMuch", func(dv backend.Device) (any, error) { return dv.Malloc(1 << 40) }},
		{"StreamCreate", func(dv backend.Device) (any, error) { return dv.StreamCreate(backend.StreamNonBlocking, -1) }},
		{"StreamPriority", func(dv backend.Device) (any, error) { return dv.StreamGetPriority(0x1001 + 0) }},
		{"BadStreamQuery", func(dv backend.Device) (any, error) { return nil, dv.StreamQuery(0xdead) }},
		{"EventCreateBadFlags", func(dv backend.Device) (any, error) { return dv.EventCreate(1 << 20) }},
		{"LoadGarbagePTX", func(dv backend.Device) (any, error) {
			return dv.LoadModule(backend.ModuleSpec{Image: []byte("not ptx"), ImageKind: backend.ImagePTX})
		}},
		{"ModuleKernelOfNothing", func(dv backend.Device) (any, error) { return dv.ModuleKernel(0x77, "saxpy") }},
		// A launch is posted: its error comes back on the stream's next query (posted.go).
		{"LaunchUnknownKernel", func(dv backend.Device) (any, error) {
			err := dv.Launch(0x99, backend.Dim3{X: 1, Y: 1, Z: 1}, backend.Dim3{X: 1, Y: 1, Z: 1}, 0, 0, []backend.Arg{{Kind: backend.ArgInt32, Bits: 1}})
			if err != nil {
				return nil, err
			}
			return nil, dv.StreamQuery(0)
		}},
		{"IpcGetMemHandleOfNothing", func(dv backend.Device) (any, error) { return dv.IpcGetMemHandle(0x1234) }},
		{"CanAccessPeer", func(dv backend.Device) (any, error) { return dv.CanAccessPeer(0) }},
		{"P2PAttribute", func(dv backend.Device) (any, error) { return dv.P2PAttribute(backend.P2PAccessSupported, 0) }},
		{"CaptureInfo", func(dv backend.Device) (any, error) { return dv.StreamCaptureInfo(0) }},
		{"CurrentMemPool", func(dv backend.Device) (any, error) { return dv.CurrentMemPool() }},
		{"PoolAccess", func(dv backend.Device) (any, error) {
			p, err := dv.DefaultMemPool()
			if err != nil {
				return nil, err
			}
			return dv.MemPoolGetAccess(p, 0)
		}},
		{"MallocManaged", func(dv backend.Device) (any, error) { return dv.MallocManaged(4096, backend.AttachGlobal) }},
		{"RangeAttribute", func(dv backend.Device) (any, error) {
			out := make([]int32, 2)
			err := dv.MemRangeAttribute(0x5, 16, backend.RangeReadMostly, out)
			return out, err
		}},
		{"GraphExecUpdateOfNothing", func(dv backend.Device) (any, error) { return dv.GraphExecUpdate(0x42, 0x43) }},
		{"LastError", func(dv backend.Device) (any, error) { return nil, dv.LastError() }},
	}
	for _, st := range steps {
		lv, lerr := st.run(ldv)
		rv, rerr := st.run(rdv)
		assert.Equal(t, lv, rv, st.name)
		if lerr == nil {
			assert.NoError(t, rerr, st.name)
			continue
		}
		require.Error(t, rerr, st.name)
		assert.Equal(t, lerr.Error(), rerr.Error(), st.name)
		if c, ok := cudaerr.CodeOf(lerr); ok {
			assert.ErrorIs(t, rerr, c, st.name)
		}
		assert.Equal(t, cudaerr.IsSticky(lerr), cudaerr.IsSticky(rerr), st.name)
	}
}
