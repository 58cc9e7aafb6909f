//go:build linux

package cudart

import (
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The trampoline called from threads C created (as CUDA's callback thread is) works too.
func TestHostFuncTrampolineForeignThreads(t *testing.T) {
	create, err := purego.Dlsym(purego.RTLD_DEFAULT, "pthread_create")
	require.NoError(t, err)
	join, err := purego.Dlsym(purego.RTLD_DEFAULT, "pthread_join")
	require.NoError(t, err)

	const n = 16
	var count atomic.Int32
	done := make(chan int, n)
	tids := make([]uint64, n)
	for i := range n {
		h := hostFuncs.put(func() {
			buf := make([]byte, 1<<16) // allocation on a foreign thread
			buf[0] = byte(i)
			count.Add(1)
			done <- i
		})
		// pthread_create(&tid, NULL, start, arg): the trampoline ignores being asked to return
		// a void*, which only the joiner would see.
		r, _, _ := purego.SyscallN(create, uintptr(unsafe.Pointer(&tids[i])), 0, hostFuncTrampoline(), h)
		require.Zero(t, int32(r))
	}
	for i := range n {
		r, _, _ := purego.SyscallN(join, uintptr(tids[i]), 0)
		require.Zero(t, int32(r))
	}
	got := map[int]bool{}
	for range n {
		got[<-done] = true
	}
	assert.Len(t, got, n)
	assert.Equal(t, int32(n), count.Load())
}
