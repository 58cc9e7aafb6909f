package interop_test

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/core"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/interop"
	"github.com/gpuactor/gpuactor/streams"
)

// openFDs is the number of file descriptors this process holds.
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	return len(ents)
}

// A file whose descriptor the imports are given.
func externalFile(t *testing.T) *os.File {
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), "exported"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = f.Close() })
	return f
}

// TestExternalSimNotSupported: the simulator refuses every import with the documented error,
// leaves the caller's descriptor open and leaks none, and the device stays usable.
func TestExternalSimNotSupported(t *testing.T) {
	ctx := testdev.Ctx(t)
	dev, _ := simDevice(t, ctx)
	f := externalFile(t)
	fd := int(f.Fd())
	before := openFDs(t)

	_, err := interop.ImportMemory(ctx, dev, fd, 1<<20)
	require.ErrorIs(t, err, interop.ErrExternalNotSupported)
	require.ErrorIs(t, err, cudaerr.NotSupported)
	_, err = interop.ImportMemory(ctx, dev, fd, 1<<20, interop.Dedicated())
	require.ErrorIs(t, err, interop.ErrExternalNotSupported)
	for _, k := range []interop.SemaphoreKind{interop.BinarySemaphore, interop.TimelineSemaphore} {
		_, err = interop.ImportSemaphore(ctx, dev, fd, k)
		require.ErrorIs(t, err, interop.ErrExternalNotSupported, k.String())
		require.ErrorIs(t, err, cudaerr.NotSupported)
	}

	assert.Equal(t, before, openFDs(t), "the duplicates given to the runtime were closed")
	_, err = f.WriteString("still open")
	require.NoError(t, err, "the caller's descriptor stays open")

	s, err := streams.New(ctx, dev)
	require.NoError(t, err)
	buf, err := dev.MallocBytes(ctx, 4096)
	require.NoError(t, err)
	require.NoError(t, s.Memset(ctx, buf, 7).Wait(ctx))
	got := make([]byte, 4096)
	testdev.Read(t, ctx, got, buf)
	require.Equal(t, byte(7), got[4095])
}

func TestExternalBadInput(t *testing.T) {
	ctx := testdev.Ctx(t)
	dev, _ := simDevice(t, ctx)
	f := externalFile(t)
	fd := int(f.Fd())

	closed := externalFile(t)
	closedFD := int(closed.Fd())
	require.NoError(t, closed.Close())

	for name, err := range map[string]error{
		"nil device":          second(interop.ImportMemory(ctx, nil, fd, 4096)),
		"size 0":              second(interop.ImportMemory(ctx, dev, fd, 0)),
		"negative fd":         second(interop.ImportMemory(ctx, dev, -1, 4096)),
		"closed fd":           second(interop.ImportMemory(ctx, dev, closedFD, 4096)),
		"sem nil device":      second(interop.ImportSemaphore(ctx, nil, fd, interop.BinarySemaphore)),
		"sem negative fd":     second(interop.ImportSemaphore(ctx, dev, -5, interop.TimelineSemaphore)),
		"sem closed fd":       second(interop.ImportSemaphore(ctx, dev, closedFD, interop.TimelineSemaphore)),
		"sem unknown kind":    second(interop.ImportSemaphore(ctx, dev, fd, interop.SemaphoreKind(42))),
		"sem zero-value kind": second(interop.ImportSemaphore(ctx, dev, fd, 0)),
	} {
		require.ErrorIs(t, err, core.ErrInvalidArgument, name)
	}
	_, err := interop.ImportMemory(ctx, dev, closedFD, 4096)
	assert.ErrorContains(t, err, "file descriptor "+strconv.Itoa(closedFD))

	var nilMem *interop.ExternalMemory
	_, err = nilMem.MapBuffer(ctx, 0, 16)
	require.ErrorIs(t, err, core.ErrInvalidArgument)
	require.ErrorIs(t, nilMem.Close(ctx), core.ErrInvalidArgument)
	var nilSem *interop.ExternalSemaphore
	require.ErrorIs(t, nilSem.Signal(ctx, streams.Default(dev), 1).Wait(ctx), core.ErrInvalidArgument)
	require.ErrorIs(t, nilSem.Close(ctx), core.ErrInvalidArgument)
}

func second[T any](_ T, err error) error { return err }
