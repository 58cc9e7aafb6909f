//go:build linux && (amd64 || arm64)

package remote_test

import (
	"fmt"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

func TestHostAllocRoundTripThroughSharedMemory(t *testing.T) {
	_, dv := open(t)
	const n = 1 << 20
	hp, err := dv.HostAlloc(2*n, backend.HostAllocPortable)
	require.NoError(t, err)
	host := unsafe.Slice((*byte)(hp), 2*n)
	for i := range n {
		host[i] = byte(i*7 + 3)
	}
	s, err := dv.StreamCreate(backend.StreamNonBlocking, 0)
	require.NoError(t, err)
	p, err := dv.Malloc(n)
	require.NoError(t, err)

	require.NoError(t, dv.CopyHtoD(p, hp, n, s))
	require.NoError(t, dv.Memset(p+16, 0xee, 16, s))
	out := unsafe.Add(hp, n)
	require.NoError(t, dv.CopyDtoH(out, p, n, s))
	require.NoError(t, dv.StreamSynchronize(s))
	got := host[n:]
	for i := range n {
		want := byte(i*7 + 3)
		if i >= 16 && i < 32 {
			want = 0xee
		}
		if got[i] != want {
			t.Fatalf("byte %d: got %#x, want %#x", i, got[i], want)
		}
	}

	// A sub-range at an offset translates too.
	require.NoError(t, dv.CopyDtoH(unsafe.Add(hp, 100), p+16, 4, s))
	require.NoError(t, dv.StreamSynchronize(s))
	assert.Equal(t, []byte{0xee, 0xee, 0xee, 0xee}, host[100:104])

	attrs, err := dv.PointerAttributes(uintptr(unsafe.Add(hp, 64)))
	require.NoError(t, err)
	assert.Equal(t, backend.MemoryHost, attrs.Type, "%+v %p", attrs, hp)
	if attrs.HostPointer != 0 {
		assert.Equal(t, uintptr(unsafe.Add(hp, 64)), attrs.HostPointer, "the host pointer comes back as the parent's")
	}

	require.NoError(t, dv.Free(p))
	require.NoError(t, dv.StreamDestroy(s))
	require.NoError(t, dv.HostFree(hp))
}

func TestCopiesRefuseHostMemoryTheWorkerCannotSee(t *testing.T) {
	_, dv := open(t)
	p, err := dv.Malloc(4096)
	require.NoError(t, err)
	goSlice := make([]byte, 4096)
	err = dv.CopyHtoD(p, unsafe.Pointer(&goSlice[0]), 4096, 0)
	require.ErrorIs(t, err, cudaerr.NotSupported)
	assert.Contains(t, err.Error(), "isolated devices copy only through gpuactor's host buffers")
	err = dv.CopyDtoH(unsafe.Pointer(&goSlice[0]), p, 4096, 0)
	require.ErrorIs(t, err, cudaerr.NotSupported)
	_, err = dv.GraphAddCopyHtoD(0, nil, p, unsafe.Pointer(&goSlice[0]), 1)
	require.ErrorIs(t, err, cudaerr.NotSupported)

	// Past the end of a shared region: refused too, nothing copied.
	hp, err := dv.HostAlloc(4096, 0)
	require.NoError(t, err)
	err = dv.CopyHtoD(p, unsafe.Add(hp, 1), 4096, 0)
	require.ErrorIs(t, err, cudaerr.NotSupported)

	// Freeing something else is refused; after the free the region is gone.
	err = dv.HostFree(unsafe.Add(hp, 8))
	require.ErrorIs(t, err, cudaerr.InvalidValue)
	require.NoError(t, dv.HostFree(hp))
	err = dv.CopyHtoD(p, hp, 16, 0)
	require.ErrorIs(t, err, cudaerr.NotSupported)
	require.NoError(t, dv.HostFree(nil))

	// Zero bytes, and flags HostAlloc does not know, as in process.
	z, err := dv.HostAlloc(0, 0)
	require.NoError(t, err)
	assert.Nil(t, z)
	_, err = dv.HostAlloc(16, 1<<7)
	require.ErrorIs(t, err, cudaerr.InvalidValue)
	require.NoError(t, dv.Free(p))
}

func TestGraphCopyNodesThroughSharedMemory(t *testing.T) {
	_, dv := open(t)
	hp, err := dv.HostAlloc(256, 0)
	require.NoError(t, err)
	host := unsafe.Slice((*byte)(hp), 256)
	for i := range 128 {
		host[i] = byte(255 - i)
	}
	p, err := dv.Malloc(128)
	require.NoError(t, err)
	g, err := dv.GraphCreate()
	require.NoError(t, err)
	up, err := dv.GraphAddCopyHtoD(g, nil, p, hp, 128)
	require.NoError(t, err)
	_, err = dv.GraphAddCopyDtoH(g, []backend.GraphNode{up}, unsafe.Add(hp, 128), p, 128)
	require.NoError(t, err)
	x, err := dv.GraphInstantiate(g, 0)
	require.NoError(t, err)
	s, err := dv.StreamCreate(backend.StreamDefault, 0)
	require.NoError(t, err)
	require.NoError(t, dv.GraphLaunch(x, s))
	require.NoError(t, dv.StreamSynchronize(s))
	assert.Equal(t, host[:128], host[128:])
	require.NoError(t, dv.GraphExecDestroy(x))
	require.NoError(t, dv.GraphDestroy(g))
	require.NoError(t, dv.StreamDestroy(s))
	require.NoError(t, dv.Free(p))
	require.NoError(t, dv.HostFree(hp))
}

// Several goroutines allocate, copy through and free shared host memory at once: the
// parent's region table and the worker's stay consistent, and no data crosses regions.
func TestSharedHostMemoryFromManyGoroutines(t *testing.T) {
	_, dv := open(t)
	const workers, rounds, n = 8, 20, 4096
	errs := make(chan error, workers)
	for w := range workers {
		go func() {
			errs <- func() error {
				s, err := dv.StreamCreate(backend.StreamNonBlocking, 0)
				if err != nil {
					return err
				}
				defer func() { _ = dv.StreamDestroy(s) }()
				p, err := dv.Malloc(n)
				if err != nil {
					return err
				}
				defer func() { _ = dv.Free(p) }()
				for r := range rounds {
					hp, err := dv.HostAlloc(2*n, 0)
					if err != nil {
						return err
					}
					host := unsafe.Slice((*byte)(hp), 2*n)
					for i := range n {
						host[i] = byte(w*31 + r*7 + i)
					}
					if err := dv.CopyHtoD(p, hp, n, s); err != nil {
						return err
					}
					if err := dv.CopyDtoH(unsafe.Add(hp, n), p, n, s); err != nil {
						return err
					}
					if err := dv.StreamSynchronize(s); err != nil {
						return err
					}
					for i := range n {
						if host[n+i] != host[i] {
							return fmt.Errorf("worker %d round %d byte %d: %#x, want %#x", w, r, i, host[n+i], host[i])
						}
					}
					if err := dv.HostFree(hp); err != nil {
						return err
					}
				}
				return nil
			}()
		}()
	}
	for range workers {
		require.NoError(t, <-errs)
	}
}

// A module image larger than a call carries goes through shared memory, with the same
// answer as in process.
func TestLargeModuleImageCrosses(t *testing.T) {
	be, dv := open(t)
	img := make([]byte, be.Process().MaxMessage()+1<<20)
	copy(img, "// not really PTX\n")
	spec := backend.ModuleSpec{Image: img, ImageKind: backend.ImagePTX}
	ldv, err := newSim().Open(0)
	require.NoError(t, err)
	lm, lerr := ldv.LoadModule(spec)
	m, err := dv.LoadModule(spec)
	if lerr != nil {
		require.Error(t, err)
		assert.Equal(t, lerr.Error(), err.Error())
		return
	}
	require.NoError(t, err)
	assert.Equal(t, lm, m)
	require.NoError(t, dv.UnloadModule(m))
}
