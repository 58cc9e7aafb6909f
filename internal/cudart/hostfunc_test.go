package cudart

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ebitengine/purego"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cudaerr"
)

func TestHandleTable(t *testing.T) {
	var tab handleTable
	var ran []int
	h1 := tab.put(func() { ran = append(ran, 1) })
	h2 := tab.put(func() { ran = append(ran, 2) })
	assert.Equal(t, uintptr(1), h1, "handles are never 0")
	assert.Equal(t, uintptr(2), h2)
	assert.Equal(t, 2, tab.pending())

	tab.take(h2)()
	assert.Nil(t, tab.take(h2), "a handle runs once")
	assert.Nil(t, tab.take(0))
	assert.Nil(t, tab.take(99))
	h3 := tab.put(func() { ran = append(ran, 3) })
	assert.Equal(t, h2, h3, "freed slots are reused")
	tab.take(h1)()
	tab.take(h3)()
	assert.Equal(t, []int{2, 1, 3}, ran)
	assert.Zero(t, tab.pending())
}

func TestHandleTableConcurrent(t *testing.T) {
	var tab handleTable
	var sum atomic.Int64
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 1000 {
				v := int64(g*1000 + i)
				h := tab.put(func() { sum.Add(v) })
				tab.take(h)()
			}
		})
	}
	wg.Wait()
	assert.Equal(t, int64(8000*7999/2), sum.Load())
	assert.Zero(t, tab.pending())
}

// The trampoline called from C on the calling thread finds and runs the function.
func TestHostFuncTrampolineSameThread(t *testing.T) {
	ran := 0
	h := hostFuncs.put(func() { ran++ })
	purego.SyscallN(hostFuncTrampoline(), h)
	assert.Equal(t, 1, ran)
	purego.SyscallN(hostFuncTrampoline(), h) // already taken: a no-op
	assert.Equal(t, 1, ran)
	require.Equal(t, hostFuncTrampoline(), hostFuncTrampoline(), "one trampoline per process")
}

func TestLaunchHostFuncNil(t *testing.T) {
	rt := mustLoad(t)
	err := rt.LaunchHostFunc(0, nil)
	assert.ErrorIs(t, err, cudaerr.InvalidValue)
}

// Without a GPU the call fails and the function is not left in the table.
func TestLaunchHostFuncFailureForgets(t *testing.T) {
	if hasGPU() {
		t.Skip("a GPU is usable here")
	}
	rt := mustLoad(t)
	before := hostFuncs.pending()
	err := rt.LaunchHostFunc(0, func() { t.Error("must not run") })
	require.Error(t, err)
	assert.Equal(t, before, hostFuncs.pending())
}
