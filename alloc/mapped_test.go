package alloc_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/internal/testfix"
	"github.com/gpuactor/gpuactor/sim"
	"github.com/gpuactor/gpuactor/streams"
)

// Zero copy: a kernel writes pinned host memory through its device address, and the host sees
// the writes once the stream is done, with no copy.
func TestMappedPinnedZeroCopy(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.Stream(t)
		const n = 1000
		for _, flags := range [][]alloc.PinnedFlag{
			{alloc.Mapped},
			{alloc.Mapped, alloc.Portable},
			{alloc.Mapped, alloc.WriteCombined},
		} {
			p, err := alloc.MallocPinned[uint32](f.Ctx, f.Dev, n, flags...)
			require.NoError(t, err)
			var want alloc.PinnedFlag
			for _, fl := range flags {
				want |= fl
			}
			got, err := p.Flags(f.Ctx)
			require.NoError(t, err)
			require.Equal(t, want, got&want, "every flag asked for is reported (%#x of %#x)", got, want)

			for i := range p.Host() {
				p.Host()[i] = uint32(i)
			}
			dp, err := p.DevicePtr(f.Ctx)
			require.NoError(t, err)
			require.NotZero(t, dp)
			cfg := cuda.LaunchConfig{Grid: cuda.Dim((n + 255) / 256), Block: cuda.Dim(256)}
			testfix.Await(t, f.Ctx, s.Launch(f.Ctx, f.add, cfg, dp, uint32(7), int32(n)))
			for i, v := range p.Host() {
				require.Equal(t, uint32(i)+7, v, "element %d with flags %#x", i, want)
			}
			require.NoError(t, p.Close(f.Ctx))
		}
	})
}

// Go memory registered with RegisterMapped is written by a kernel in place.
func TestRegisteredMappedZeroCopy(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		s := f.Stream(t)
		data := make([]uint32, 4096)
		for i := range data {
			data[i] = uint32(3 * i)
		}
		r, err := alloc.Register(f.Ctx, f.Dev, data, alloc.RegisterMapped)
		require.NoError(t, err)
		dp, err := r.DevicePtr(f.Ctx)
		require.NoError(t, err)
		cfg := cuda.LaunchConfig{Grid: cuda.Dim(uint32(len(data) / 256)), Block: cuda.Dim(256)}
		testfix.Await(t, f.Ctx, s.Launch(f.Ctx, f.add, cfg, dp, uint32(1), int32(len(data))))
		for i, v := range data {
			require.Equal(t, uint32(3*i)+1, v, "element %d", i)
		}
		require.NoError(t, r.Close(f.Ctx))
	})
}

// The simulator gives no device address to memory registered without RegisterMapped.
func TestUnmappedRegistrationHasNoDeviceAddressSim(t *testing.T) {
	eachBackend(t, func(t *testing.T, f *fixture) {
		if f.Dev.Backend() != device.BackendSim {
			t.Skip("the GPU may map every registration under unified addressing")
		}
		data := make([]uint32, 256)
		r, err := alloc.Register(f.Ctx, f.Dev, data)
		require.NoError(t, err)
		_, err = r.DevicePtr(f.Ctx)
		require.ErrorIs(t, err, cudaerr.InvalidValue)
		require.ErrorContains(t, err, "HostRegisterMapped")
		require.NoError(t, r.Close(f.Ctx))
		requireStreamUsable(t, f, f.Stream(t))
	})
}

// A kernel that runs past the end of mapped host memory faults as one past device memory
// does. On a machine of its own: the fault is sticky for the whole process.
func TestMappedPastTheEndFaultsSim(t *testing.T) {
	ctx := testdev.Ctx(t)
	d, err := device.Open(ctx, 0, device.WithSimulator(sim.New()), device.WithKernelCache(""))
	require.NoError(t, err)
	defer func() { _ = d.Close() }()
	mod, err := d.Compile(ctx, device.Source{Name: "alloc_test.cu", Code: testSource, Sim: testSim})
	require.NoError(t, err)
	k, err := mod.Kernel(ctx, "add_u32")
	require.NoError(t, err)
	p, err := alloc.MallocPinned[uint32](ctx, d, 16, alloc.Mapped)
	require.NoError(t, err)
	dp, err := p.DevicePtr(ctx)
	require.NoError(t, err)
	err = streams.Default(d).Launch(ctx, k, one(), dp, uint32(1), int32(17)).Wait(ctx)
	require.ErrorIs(t, err, cudaerr.IllegalAddress)
	require.ErrorContains(t, err, "past the end of the 64-byte mapped host range")
}
