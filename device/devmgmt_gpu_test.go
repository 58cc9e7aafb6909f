//go:build linux

package device_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
)

// The generic attribute query agrees with the properties read when the device opened, answers
// every attribute a 12.x runtime already had, and refuses one no runtime has by naming it.
func TestAttributesAgreeWithProperties(t *testing.T) {
	testdev.Backends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		dev := openDev(t, opts)
		p := dev.Properties()
		for a, want := range map[device.Attribute]int{
			device.AttrMultiProcessorCount:              p.MultiProcessors,
			device.AttrComputeCapabilityMajor:           p.ComputeCapability.Major,
			device.AttrComputeCapabilityMinor:           p.ComputeCapability.Minor,
			device.AttrMaxThreadsPerBlock:               p.MaxThreadsPerBlock,
			device.AttrMaxThreadsPerMultiProcessor:      p.MaxThreadsPerSM,
			device.AttrMaxSharedMemoryPerBlockOptin:     p.SharedMemPerBlockOptin,
			device.AttrMaxSharedMemoryPerMultiprocessor: p.SharedMemPerSM,
			device.AttrL2CacheSize:                      p.L2CacheBytes,
			device.AttrWarpSize:                         p.WarpSize,
			device.AttrMaxBlockDimZ:                     int(p.MaxBlock.Z),
			device.AttrMaxGridDimX:                      int(p.MaxGrid.X),
			device.AttrPCIBusID:                         p.PCIBus,
			device.AttrClockRate:                        p.ClockKHz,
		} {
			v, err := dev.Attribute(ctx, a)
			require.NoError(t, err, a.String())
			assert.Equal(t, want, v, a.String())
		}
		for _, a := range device.Attributes() {
			if a > device.AttrDeferredMappingCUDAArraySupported {
				continue // newer than some runtimes the cuda subtest may load
			}
			_, err := dev.Attribute(ctx, a)
			assert.NoError(t, err, a.String())
		}
		_, err := dev.Attribute(ctx, 9999)
		require.ErrorIs(t, err, cudaerr.InvalidValue)
		assert.Contains(t, err.Error(), "cudaDeviceAttr(9999)")
		_, err = dev.Attribute(ctx, -1)
		require.ErrorIs(t, err, cudaerr.InvalidValue)
		_, _, err = dev.MemInfo(ctx)
		require.NoError(t, err, "the device stays usable")
	})
}

// A device's UUID is non-zero, the same from every handle, and different on every device.
func TestUUIDIsStableAndUnique(t *testing.T) {
	testdev.Backends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		dev := openDev(t, opts)
		u, err := dev.UUID(ctx)
		require.NoError(t, err)
		assert.NotEqual(t, device.UUID{}, u)
		assert.Regexp(t, `^GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`, u.String())
		again := openDev(t, opts)
		u2, err := again.UUID(ctx)
		require.NoError(t, err)
		assert.Equal(t, u, u2)
		_, _, err = dev.LUID(ctx)
		require.NoError(t, err)
		if smi, err := exec.LookPath("nvidia-smi"); err == nil && strings.HasSuffix(t.Name(), "/cuda") {
			out, err := exec.Command(smi, "-L").Output()
			require.NoError(t, err)
			assert.Contains(t, string(out), u.String(), "nvidia-smi names the same UUID")
		}
		seen := map[device.UUID]int{}
		for _, d := range testdev.All(t, ctx, opts, dev) {
			u, err := d.UUID(ctx)
			require.NoError(t, err)
			if o, dup := seen[u]; dup {
				t.Fatalf("devices %d and %d share UUID %v", o, d.Ordinal(), u)
			}
			seen[u] = d.Ordinal()
		}
	})
}

// Every device is found again by its PCI address; an address no device has, or none, is
// refused.
func TestPCIBusIDRoundTrip(t *testing.T) {
	testdev.Backends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		dev := openDev(t, opts)
		for _, d := range append([]*device.Device{dev}, testdev.All(t, ctx, opts, dev)[1:]...) {
			n, err := device.ByPCIBusID(ctx, d.Properties().PCIBusID, opts...)
			require.NoError(t, err, d.Properties().PCIBusID)
			assert.Equal(t, d.Ordinal(), n)
		}
		_, err := device.ByPCIBusID(ctx, "ffff:ff:1f.0", opts...)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "ffff:ff:1f.0")
		_, err = device.ByPCIBusID(ctx, "not an address", opts...)
		require.Error(t, err)
		_, err = device.ByPCIBusID(ctx, "", opts...)
		require.ErrorIs(t, err, device.ErrInvalidArgument)
	})
}

// Limits set are read back; the persisting L2 size stays within the device's maximum; a limit
// the device refuses leaves the old value and the device usable.
func TestLimitsSetAndGet(t *testing.T) {
	testdev.Backends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		dev := openDev(t, opts)
		for l, v := range map[device.Limit]uint64{
			device.LimitStackSize:      4096,
			device.LimitPrintfFifoSize: 4 << 20,
			device.LimitMallocHeapSize: 32 << 20,
		} {
			old, err := dev.Limit(ctx, l)
			require.NoError(t, err, l.String())
			require.NoError(t, dev.SetLimit(ctx, l, v), l.String())
			got, err := dev.Limit(ctx, l)
			require.NoError(t, err, l.String())
			assert.Equal(t, v, got, l.String())
			t.Cleanup(func() { _ = dev.SetLimit(ctx, l, old) })
		}

		maxPersist, err := dev.Attribute(ctx, device.AttrMaxPersistingL2CacheSize)
		require.NoError(t, err)
		oldPersist, err := dev.Limit(ctx, device.LimitPersistingL2CacheSize)
		require.NoError(t, err)
		t.Cleanup(func() { _ = dev.SetLimit(ctx, device.LimitPersistingL2CacheSize, oldPersist) })
		require.NoError(t, dev.SetLimit(ctx, device.LimitPersistingL2CacheSize, uint64(maxPersist)))
		got, err := dev.Limit(ctx, device.LimitPersistingL2CacheSize)
		require.NoError(t, err)
		assert.LessOrEqual(t, got, uint64(maxPersist))
		if err := dev.SetLimit(ctx, device.LimitPersistingL2CacheSize, uint64(maxPersist)+1<<20); err == nil {
			got, err := dev.Limit(ctx, device.LimitPersistingL2CacheSize)
			require.NoError(t, err)
			assert.LessOrEqual(t, got, uint64(maxPersist), "a size above the maximum is clamped")
		} else {
			assert.ErrorIs(t, err, cudaerr.InvalidValue)
		}

		err = dev.SetLimit(ctx, device.LimitStackSize, 1<<40)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "cudaLimitStackSize")
		assert.Contains(t, err.Error(), "1099511627776")
		got, err = dev.Limit(ctx, device.LimitStackSize)
		require.NoError(t, err)
		assert.Equal(t, uint64(4096), got, "a refused value leaves the old one")

		_, err = dev.Limit(ctx, 99)
		require.ErrorIs(t, err, cudaerr.UnsupportedLimit)
		assert.Contains(t, err.Error(), "cudaLimit(99)")
		_, _, err = dev.MemInfo(ctx)
		require.NoError(t, err, "the device stays usable")
	})
}

// envFlagsChild marks the test binary run as a fresh process whose first Open sets flags.
const envFlagsChild = "GPUACTOR_TEST_FLAGS_CHILD"

// Flags given to Open are the context's; other scheduling flags for a context that exists are
// refused, naming both; flags that cannot go together are refused before anything opens. On
// the GPU the runtime keeps a primary context for the life of the process, so the first Open
// runs in a fresh process.
func TestFlagsOnOpen(t *testing.T) {
	if os.Getenv(envFlagsChild) == "1" {
		return // the child's work is TestFlagsChild
	}
	testdev.Backends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		if strings.HasSuffix(t.Name(), "/cuda") {
			cmd := exec.Command(os.Args[0], "-test.run=^TestFlagsChild$", "-test.v")
			cmd.Env = append(os.Environ(), envFlagsChild+"=1")
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s", out)
			require.Contains(t, string(out), "--- PASS: TestFlagsChild")
		} else {
			checkFlagsFirstOpen(t, opts)
		}
		dev := openDev(t, opts)
		cur, err := dev.Flags(ctx)
		require.NoError(t, err)
		other := device.ScheduleSpin
		if cur&device.ScheduleSpin != 0 {
			other = device.ScheduleYield
		}
		_, err = device.Open(ctx, 0, append(opts, device.WithFlags(other))...)
		require.ErrorIs(t, err, cudaerr.SetOnActiveProcess)
		assert.Contains(t, err.Error(), "0x1")
		same, err := device.Open(ctx, 0, append(opts, device.WithFlags(cur&(device.ScheduleSpin|device.ScheduleYield|device.ScheduleBlockingSync)))...)
		require.NoError(t, err, "the flags the context has are no change")
		require.NoError(t, same.Close())
		_, err = device.Open(ctx, 0, append(opts, device.WithFlags(device.ScheduleSpin|device.ScheduleYield))...)
		require.ErrorIs(t, err, device.ErrInvalidArgument)
		_, err = device.Open(ctx, 0, append(opts, device.WithFlags(0x100))...)
		require.ErrorIs(t, err, device.ErrInvalidArgument)
		_, _, err = dev.MemInfo(ctx)
		require.NoError(t, err, "the device stays usable")
	})
}

// TestFlagsChild is TestFlagsOnOpen's first Open in a process of its own.
func TestFlagsChild(t *testing.T) {
	if os.Getenv(envFlagsChild) != "1" {
		t.Skip("run by TestFlagsOnOpen")
	}
	checkFlagsFirstOpen(t, []device.Option{device.WithBackend(device.BackendCUDA), device.WithKernelCache("")})
}

func checkFlagsFirstOpen(t *testing.T, opts []device.Option) {
	ctx := testdev.Ctx(t)
	dev := openDev(t, append(opts, device.WithFlags(device.ScheduleBlockingSync)))
	f, err := dev.Flags(ctx)
	require.NoError(t, err)
	assert.Equal(t, device.ScheduleBlockingSync, f&(device.ScheduleSpin|device.ScheduleYield|device.ScheduleBlockingSync), f.String())
	// The device works with the flags: a synchronize waits by blocking.
	b := mustMalloc(t, dev, 1<<20)
	require.NoError(t, dev.Synchronize(ctx))
	require.NoError(t, b.Close(ctx))
}

// The cache preference set is read back; the bank width of a GPU since Maxwell stays four
// bytes whatever is asked; values outside the enums are refused before the device.
func TestCacheAndSharedMemConfig(t *testing.T) {
	testdev.Backends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		dev := openDev(t, opts)
		old, err := dev.CacheConfig(ctx)
		require.NoError(t, err)
		t.Cleanup(func() { _ = dev.SetCacheConfig(ctx, old) })
		require.NoError(t, dev.SetCacheConfig(ctx, cuda.CachePreferShared))
		got, err := dev.CacheConfig(ctx)
		require.NoError(t, err)
		assert.Equal(t, cuda.CachePreferShared, got)
		require.ErrorIs(t, dev.SetCacheConfig(ctx, 7), device.ErrInvalidArgument)

		require.NoError(t, dev.SetSharedMemConfig(ctx, device.BankSizeEightByte))
		bank, err := dev.SharedMemConfig(ctx)
		require.NoError(t, err)
		assert.Equal(t, device.BankSizeFourByte, bank)
		require.ErrorIs(t, dev.SetSharedMemConfig(ctx, 3), device.ErrInvalidArgument)
	})
}

// The runtime's last error on the actor thread is the last failed call's, whoever made it:
// PeekError leaves it, LastError clears it.
func TestLastAndPeekError(t *testing.T) {
	testdev.Backends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		dev := openDev(t, opts)
		_ = dev.LastError(ctx) // whatever earlier tests left
		require.NoError(t, dev.PeekError(ctx))
		_, err := dev.Attribute(ctx, 9999)
		require.Error(t, err)
		for range 2 {
			require.ErrorIs(t, dev.PeekError(ctx), cudaerr.InvalidValue, "peeking leaves it")
		}
		require.ErrorIs(t, dev.LastError(ctx), cudaerr.InvalidValue)
		require.NoError(t, dev.LastError(ctx), "cleared")
		require.NoError(t, dev.PeekError(ctx))
	})
}

// A flush is supported where the device says it can flush, and NotSupported elsewhere.
func TestFlushGPUDirectRDMAWrites(t *testing.T) {
	testdev.Backends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		dev := openDev(t, opts)
		can, err := dev.Attribute(ctx, device.AttrGPUDirectRDMAFlushWritesOptions)
		require.NoError(t, err)
		err = dev.FlushGPUDirectRDMAWrites(ctx, device.FlushToOwner)
		if can&1 != 0 {
			require.NoError(t, err)
		} else {
			require.ErrorIs(t, err, cudaerr.NotSupported)
		}
		require.ErrorIs(t, dev.FlushGPUDirectRDMAWrites(ctx, 7), device.ErrInvalidArgument)
	})
}

// Choose picks a device that meets what is asked.
func TestChooseDevice(t *testing.T) {
	testdev.Backends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		dev := openDev(t, opts)
		p := dev.Properties()
		n, err := device.Choose(ctx, device.Properties{ComputeCapability: p.ComputeCapability, Name: p.Name}, opts...)
		require.NoError(t, err)
		d, err := device.Open(ctx, n, opts...)
		require.NoError(t, err)
		assert.Equal(t, p.Name, d.Properties().Name)
		assert.GreaterOrEqual(t, d.Properties().ComputeCapability.Arch(), p.ComputeCapability.Arch())
		require.NoError(t, d.Close())
	})
}

// An isolated device answers the device-management calls from its worker, as one in process
// does, and refuses context flags before it starts a worker.
func TestDeviceManagementIsolated(t *testing.T) {
	isolatedBackends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		dev := openDev(t, opts)
		n, err := dev.Attribute(ctx, device.AttrMultiProcessorCount)
		require.NoError(t, err)
		assert.Equal(t, dev.Properties().MultiProcessors, n)
		u, err := dev.UUID(ctx)
		require.NoError(t, err)
		assert.NotEqual(t, device.UUID{}, u)
		old, err := dev.Limit(ctx, device.LimitStackSize)
		require.NoError(t, err)
		t.Cleanup(func() { _ = dev.SetLimit(ctx, device.LimitStackSize, old) })
		require.NoError(t, dev.SetLimit(ctx, device.LimitStackSize, 2048))
		v, err := dev.Limit(ctx, device.LimitStackSize)
		require.NoError(t, err)
		assert.Equal(t, uint64(2048), v)
		_ = dev.LastError(ctx)
		_, err = dev.Attribute(ctx, 9999)
		require.ErrorIs(t, err, cudaerr.InvalidValue)
		require.ErrorIs(t, dev.PeekError(ctx), cudaerr.InvalidValue)
		require.ErrorIs(t, dev.LastError(ctx), cudaerr.InvalidValue)
		require.NoError(t, dev.LastError(ctx))
		_, err = dev.Flags(ctx)
		require.NoError(t, err)

		_, err = device.Open(ctx, 0, append(opts, device.WithFlags(device.ScheduleBlockingSync))...)
		require.ErrorIs(t, err, device.ErrInvalidArgument)
		assert.Contains(t, err.Error(), "WithFlags(ScheduleBlockingSync)")
	})
}
