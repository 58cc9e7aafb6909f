// Package testfix is the fixture the alloc, streams and graphs tests share: a device opened
// on each backend, with the test's kernels compiled, and the streams and buffers tests make
// on it.
//
// It is a package of its own, not part of internal/testdev, because it imports streams, and
// streams' own (internal) tests import testdev: testdev importing streams would be a cycle.
package testfix

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/streams"
)

// Fixture is one device of one backend, opened for one test; it closes with the test.
type Fixture struct {
	Ctx  context.Context // ends with the test (testdev.Ctx)
	Dev  *device.Device  // the device under test
	Opts []device.Option // the options Dev was opened with
	mod  *device.Module  // the test's kernels, compiled on Dev
	src  device.Source   // what mod was compiled from
}

// EachBackend runs fn on the simulator and on the GPU (skipped without one, failed without
// one when GPUACTOR_REQUIRE_GPU=1), each time with a fresh device opened with extra and with
// src compiled on it. It returns when every run has.
func EachBackend(t *testing.T, src device.Source, fn func(t *testing.T, f *Fixture), extra ...device.Option) {
	testdev.Backends(t, func(t *testing.T, opts []device.Option) {
		opts = append(opts, extra...)
		ctx := testdev.Ctx(t)
		dev := testdev.Open(t, ctx, opts)
		mod, err := dev.Compile(ctx, src)
		require.NoError(t, err, "compiling %s", src.Name)
		fn(t, &Fixture{Ctx: ctx, Dev: dev, Opts: opts, mod: mod, src: src})
	})
}

// Kernel returns the kernel name of the fixture's source, compiled on f.Dev.
func (f *Fixture) Kernel(t testing.TB, name string) *device.Kernel {
	t.Helper()
	return f.KernelOn(t, f.Dev, name)
}

// KernelOn returns the kernel name of the fixture's source compiled on dev, another device
// of f's backend.
func (f *Fixture) KernelOn(t testing.TB, dev *device.Device, name string) *device.Kernel {
	t.Helper()
	mod := f.mod
	if dev != f.Dev {
		var err error
		mod, err = dev.Compile(f.Ctx, f.src)
		require.NoError(t, err, "compiling %s on %v", f.src.Name, dev)
	}
	k, err := mod.Kernel(f.Ctx, name)
	require.NoError(t, err, "kernel %s of %s", name, f.src.Name)
	return k
}

// Stream creates a stream on f.Dev with opts; it is closed when the test ends.
func (f *Fixture) Stream(t testing.TB, opts ...streams.Option) *streams.Stream {
	t.Helper()
	s, err := streams.New(f.Ctx, f.Dev, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	return s
}

// Buffer allocates n bytes of device memory on f.Dev; the test closes it, or the device does.
func (f *Fixture) Buffer(t testing.TB, n uint64) *device.Buffer {
	t.Helper()
	b, err := f.Dev.MallocBytes(f.Ctx, n)
	require.NoError(t, err)
	return b
}

// All is every device of the machine, f.Dev in its place; it skips the test when there is
// only one.
func (f *Fixture) All(t *testing.T) []*device.Device { return testdev.All(t, f.Ctx, f.Opts, f.Dev) }

// Await fails the test unless fut completes without error before ctx ends.
func Await(t testing.TB, ctx context.Context, fut *streams.Future) {
	t.Helper()
	require.NoError(t, fut.Wait(ctx))
}
