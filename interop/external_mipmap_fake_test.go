//go:build linux

package interop_test

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/interop"
	"github.com/gpuactor/gpuactor/streams"
)

// The model maps a mipmapped array of imported memory as the simulator's own mipmapped array,
// so that copies through its levels work, and records the flags it was asked with: the
// simulator's allocation takes no ColorAttachment, which only this call knows.
func (d *extDevice) ExternalMemoryMappedMipmappedArray(m backend.ExternalMemory, offset uint64, f backend.ChannelFormat, e backend.Extent3D, levels, flags uint32) (backend.MipmappedArray, error) {
	if _, err := d.imported(m, "cudaExternalMemoryGetMappedMipmappedArray"); err != nil {
		return 0, err
	}
	if e.Width == 13 { // the model's refusal: a layout the memory cannot hold
		return 0, cudaerr.New("cudaExternalMemoryGetMappedMipmappedArray", cudaerr.InvalidValue)
	}
	a, err := d.Device.MallocMipmappedArray(f, e, levels, flags&^backend.ArrayColorAttachment)
	if err != nil {
		return 0, err
	}
	d.st.mu.Lock()
	d.st.mipmaps[a] = m
	d.st.mipFlags = append(d.st.mipFlags, flags)
	d.st.mu.Unlock()
	return a, nil
}

func (d *extDevice) FreeMipmappedArray(a backend.MipmappedArray) error {
	d.st.mu.Lock()
	delete(d.st.mipmaps, a)
	d.st.mu.Unlock()
	return d.Device.FreeMipmappedArray(a)
}

// mapped is how many mipmapped arrays of imported memory the model has mapped now.
func (s *extState) mapped() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.mipmaps)
}

func TestExternalMemoryMipmappedArrays(t *testing.T) {
	ctx := testdev.Ctx(t)
	dev, st := openExt(t)
	f := externalFile(t)
	m, err := interop.ImportMemory(ctx, dev, int(f.Fd()), 1<<20)
	require.NoError(t, err)
	s, err := streams.New(ctx, dev)
	require.NoError(t, err)
	format := cuda.Channels[float32](1)

	a, err := m.MapMipmappedArray(ctx, 0, format, alloc.Extent{W: 64, H: 32}, 3, alloc.SurfaceLoadStore(), alloc.ColorAttachment())
	require.NoError(t, err)
	assert.Equal(t, 3, a.Levels())
	assert.Equal(t, format, a.Format())
	assert.Equal(t, alloc.Extent{W: 64, H: 32}, a.Extent())
	assert.Equal(t, alloc.ArraySurfaceLoadStore|alloc.ArrayColorAttachment, a.Flags())
	assert.Equal(t, dev, a.Device())
	st.mu.Lock()
	assert.Equal(t, []uint32{backend.ArraySurfaceLoadStore | backend.ArrayColorAttachment}, st.mipFlags, "the runtime is asked with ColorAttachment")
	st.mu.Unlock()

	// Its levels are arrays like any other: each written and read back.
	for i, e := range []alloc.Extent{{W: 64, H: 32}, {W: 32, H: 16}, {W: 16, H: 8}} {
		l, err := a.Level(ctx, i)
		require.NoError(t, err)
		require.Equal(t, e, l.Extent(), "level %d", i)
		in := make([]float32, e.W*e.H)
		for j := range in {
			in[j] = float32(i*10000 + j)
		}
		require.NoError(t, alloc.CopyToArray(ctx, s, l, l.Whole(), in).Wait(ctx))
		out := make([]float32, len(in))
		require.NoError(t, alloc.CopyFromArray(ctx, s, out, l, l.Whole()).Wait(ctx))
		require.Equal(t, in, out, "level %d", i)
	}
	_, err = a.Level(ctx, 3)
	require.ErrorIs(t, err, core.ErrOutOfRange)

	// More levels than the extent has are clamped, as NewMipmappedArray's are.
	clamped, err := m.MapMipmappedArray(ctx, 1<<16, format, alloc.Extent{W: 8, H: 8}, 10)
	require.NoError(t, err)
	assert.Equal(t, 4, clamped.Levels())

	// Bad input: refused before the runtime sees it, the memory still usable.
	bad := []struct {
		name   string
		offset uint64
		format cuda.ChannelFormat
		extent alloc.Extent
		levels int
		is     error
	}{
		{"no levels", 0, format, alloc.Extent{W: 8}, 0, core.ErrInvalidArgument},
		{"65 levels", 0, format, alloc.Extent{W: 8}, 65, core.ErrInvalidArgument},
		{"zero width", 0, format, alloc.Extent{H: 8}, 1, core.ErrInvalidArgument},
		{"negative depth", 0, format, alloc.Extent{W: 8, H: 8, D: -1}, 1, core.ErrInvalidArgument},
		{"no channels", 0, cuda.ChannelFormat{Kind: cuda.ChannelFloat}, alloc.Extent{W: 8}, 1, core.ErrInvalidArgument},
		{"offset at the end", 1 << 20, format, alloc.Extent{W: 8}, 1, core.ErrOutOfRange},
		{"offset past the end", ^uint64(0), format, alloc.Extent{W: 8}, 1, core.ErrOutOfRange},
	}
	for _, c := range bad {
		_, err := m.MapMipmappedArray(ctx, c.offset, c.format, c.extent, c.levels)
		require.ErrorIs(t, err, c.is, c.name)
	}
	var nilMem *interop.ExternalMemory
	_, err = nilMem.MapMipmappedArray(ctx, 0, format, alloc.Extent{W: 8}, 1)
	require.ErrorIs(t, err, core.ErrInvalidArgument)
	// The runtime's own refusal is its error, and leaves nothing mapped.
	before := st.mapped()
	_, err = m.MapMipmappedArray(ctx, 0, format, alloc.Extent{W: 13}, 1)
	require.ErrorIs(t, err, cudaerr.InvalidValue)
	assert.Equal(t, before, st.mapped())
	// ColorAttachment is only for mapped images.
	_, err = alloc.NewMipmappedArray(ctx, dev, format, alloc.Extent{W: 8, H: 8}, 2, alloc.ColorAttachment())
	require.ErrorIs(t, err, core.ErrInvalidArgument)
	_, err = alloc.NewArray(ctx, dev, format, alloc.Extent{W: 8, H: 8}, alloc.ColorAttachment())
	require.ErrorIs(t, err, core.ErrInvalidArgument)

	// One closed by its holder; the other left to the memory's Close.
	require.NoError(t, clamped.Close(ctx))
	require.ErrorIs(t, clamped.Close(ctx), core.ErrClosed)
	assert.Equal(t, 1, st.mapped())
	l0, err := a.Level(ctx, 0)
	require.NoError(t, err)
	require.NoError(t, m.Close(ctx))
	assert.Equal(t, 0, st.mapped())
	require.ErrorIs(t, a.Close(ctx), core.ErrClosed)
	_, err = a.Level(ctx, 1)
	require.ErrorIs(t, err, core.ErrClosed)
	require.ErrorIs(t, alloc.CopyToArray(ctx, s, l0, l0.Whole(), make([]float32, 64*32)).Wait(ctx), core.ErrClosed, "a level of a closed mapping")
	_, err = m.MapMipmappedArray(ctx, 0, format, alloc.Extent{W: 8}, 1)
	require.ErrorIs(t, err, core.ErrClosed)
	st.mu.Lock()
	assert.Equal(t, 1, st.destroyed)
	st.mu.Unlock()

	// Left open: the device's Close frees the mapping, then destroys the memory (openExt's
	// cleanup checks the order).
	m2, err := interop.ImportMemory(ctx, dev, int(f.Fd()), 1<<16)
	require.NoError(t, err)
	_, err = m2.MapMipmappedArray(ctx, 0, format, alloc.Extent{W: 16, H: 16}, 2)
	require.NoError(t, err)
}

// Goroutines map, use and close mipmapped arrays while another closes the memory: each map
// gives a working array or ErrClosed, and the memory is destroyed once, after every mapping
// was freed (the model's faults, checked in openExt's cleanup).
func TestExternalMipmappedArraysConcurrentClose(t *testing.T) {
	ctx := testdev.Ctx(t)
	st, m, s := openExtMemory(t, ctx, 1<<20)
	format := cuda.Channels[float32](1)

	var wg sync.WaitGroup
	start := make(chan struct{})
	for g := range 8 {
		wg.Go(func() {
			<-start
			for range 20 {
				a, err := m.MapMipmappedArray(ctx, uint64(g)*4096, format, alloc.Extent{W: 16, H: 16}, 2)
				if err != nil {
					assert.ErrorIs(t, err, core.ErrClosed)
					return
				}
				l, err := a.Level(ctx, 1)
				if err == nil {
					err = alloc.CopyToArray(ctx, s, l, l.Whole(), make([]float32, 64)).Wait(ctx)
				}
				if err != nil {
					assert.ErrorIs(t, err, core.ErrClosed)
				}
				if err := a.Close(ctx); err != nil {
					assert.ErrorIs(t, err, core.ErrClosed)
				}
			}
		})
	}
	wg.Go(func() {
		<-start
		assert.NoError(t, m.Close(ctx))
	})
	close(start)
	wg.Wait()
	assert.Equal(t, 0, st.mapped())
	st.mu.Lock()
	assert.Equal(t, 1, st.destroyed)
	st.mu.Unlock()
}
