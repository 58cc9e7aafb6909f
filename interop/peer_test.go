package interop_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/interop"
	"github.com/gpuactor/gpuactor/sim"
	"github.com/gpuactor/gpuactor/streams"
)

// addU32 compiles add_u32 on dev.
func addU32(t *testing.T, ctx context.Context, dev *device.Device) *device.Kernel {
	t.Helper()
	mod, err := dev.Compile(ctx, device.Source{Name: "add.cu", Code: testdev.AddU32,
		Sim: map[string]cuda.SimKernel{"add_u32": testdev.AddU32Sim}})
	require.NoError(t, err)
	k, err := mod.Kernel(ctx, "add_u32")
	require.NoError(t, err)
	return k
}

func seq(n int, base uint32) []uint32 {
	s := make([]uint32, n)
	for i := range s {
		s[i] = base + uint32(i)
	}
	return s
}

// TestPeerSelf: a device is not its own peer: every peer call says so, naming the device, and
// the device stays usable. Runs on one GPU.
func TestPeerSelf(t *testing.T) {
	testdev.Backends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		dev := testdev.Open(t, ctx, opts)

		ok, err := interop.CanAccessPeer(ctx, dev, dev)
		require.False(t, ok)
		require.ErrorIs(t, err, interop.ErrNoPeerAccess)
		require.ErrorIs(t, err, device.ErrInvalidArgument)
		require.ErrorContains(t, err, "device 0 and its peer are the same device")
		_, err = interop.P2PAttribute(ctx, dev, dev, interop.P2PAccessSupported)
		require.ErrorIs(t, err, interop.ErrNoPeerAccess)
		require.ErrorIs(t, interop.EnablePeerAccess(ctx, dev, dev), interop.ErrNoPeerAccess)
		require.ErrorIs(t, interop.DisablePeerAccess(ctx, dev, dev), interop.ErrNoPeerAccess)

		_, err = interop.CanAccessPeer(ctx, nil, dev)
		require.ErrorIs(t, err, device.ErrInvalidArgument)
		require.ErrorIs(t, interop.EnablePeerAccess(ctx, dev, nil), device.ErrInvalidArgument)
		testdev.RequireUsable(t, dev)
	})
}

// TestPeerAccess: between every ordered pair of devices, access is asked, enabled and disabled
// idempotently, and the link's attributes read; where the first may access the second, its
// kernel updates the second's memory directly. Every pair: each is a few calls and a 1 KiB
// kernel, and a host's links differ pair by pair (NVLink, PCIe switch, socket).
func TestPeerAccess(t *testing.T) {
	testdev.Backends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		devs := testdev.All(t, ctx, opts)
		kernels := make([]*device.Kernel, len(devs))
		for i, d := range devs {
			kernels[i] = addU32(t, ctx, d)
		}
		for _, p := range testdev.Pairs(len(devs)) {
			t.Run(fmt.Sprintf("%d-%d", p[0], p[1]), func(t *testing.T) {
				peerAccess(t, ctx, devs[p[0]], devs[p[1]], kernels[p[0]])
			})
		}
	})
}

// peerAccess is TestPeerAccess for one ordered pair: d0 accessing d1's memory with its kernel k.
func peerAccess(t *testing.T, ctx context.Context, d0, d1 *device.Device, k *device.Kernel) {
	can01, err := interop.CanAccessPeer(ctx, d0, d1)
	require.NoError(t, err)
	can10, err := interop.CanAccessPeer(ctx, d1, d0)
	require.NoError(t, err)
	if d0.Backend() == device.BackendSim {
		require.True(t, can01)
		require.True(t, can10)
	}
	sup, err := interop.P2PAttribute(ctx, d0, d1, interop.P2PAccessSupported)
	require.NoError(t, err)
	require.Equal(t, can01, sup == 1)
	for _, a := range []interop.P2PAttr{interop.P2PPerformanceRank, interop.P2PNativeAtomics, interop.P2PArrayAccess} {
		v, err := interop.P2PAttribute(ctx, d0, d1, a)
		require.NoError(t, err, a.String())
		require.GreaterOrEqual(t, v, 0, a.String())
	}
	_, err = interop.P2PAttribute(ctx, d0, d1, interop.P2PAttr(99))
	require.ErrorIs(t, err, device.ErrInvalidArgument)
	require.ErrorContains(t, err, "P2PAttr(99)")

	if !can01 {
		err := interop.EnablePeerAccess(ctx, d0, d1)
		require.ErrorIs(t, err, interop.ErrNoPeerAccess)
		require.ErrorContains(t, err, fmt.Sprintf("device %d cannot access device %d", d0.Ordinal(), d1.Ordinal()))
		testdev.RequireUsable(t, d0)
		return
	}
	for range 2 { // twice each: already enabled and not enabled are not errors
		require.NoError(t, interop.EnablePeerAccess(ctx, d0, d1))
	}
	if can10 {
		require.NoError(t, interop.EnablePeerAccess(ctx, d1, d0))
	}

	// d0's kernel updates d1's memory directly, through its address (a launch refuses
	// another device's buffer object).
	buf, err := d1.MallocBytes(ctx, 4*256)
	require.NoError(t, err)
	testdev.Write(t, ctx, buf, seq(256, 0))
	p, err := buf.DevicePtr(ctx)
	require.NoError(t, err)
	require.NoError(t, streams.Default(d0).Launch(ctx, k, cuda.LaunchConfig{Grid: cuda.Dim3{X: 1, Y: 1, Z: 1}, Block: cuda.Dim3{X: 256, Y: 1, Z: 1}}, p, uint32(5), int32(256)).Wait(ctx))
	got := make([]uint32, 256)
	testdev.Read(t, ctx, got, buf)
	require.Equal(t, seq(256, 5), got)
	require.NoError(t, buf.Close(ctx))

	for range 2 {
		require.NoError(t, interop.DisablePeerAccess(ctx, d0, d1))
	}
	if can10 {
		require.NoError(t, interop.DisablePeerAccess(ctx, d1, d0))
	}
	require.NoError(t, interop.EnablePeerAccess(ctx, d0, d1)) // again after a disable
	require.NoError(t, interop.DisablePeerAccess(ctx, d0, d1))
	testdev.RequireUsable(t, d0)
	testdev.RequireUsable(t, d1)
}

// TestPeerClosedAndForeignDevices: a closed device, or devices of two machines, are refused
// clearly.
func TestPeerClosedAndForeignDevices(t *testing.T) {
	ctx := testdev.Ctx(t)
	opts := []device.Option{device.WithSimulator(sim.New())}
	d0 := testdev.Open(t, ctx, opts)
	d1, err := device.Open(ctx, 1, opts...)
	require.NoError(t, err)
	require.NoError(t, d1.Close())

	_, err = interop.CanAccessPeer(ctx, d0, d1)
	require.ErrorIs(t, err, device.ErrClosed)
	require.ErrorContains(t, err, "device 1 used after Close")
	require.ErrorIs(t, interop.EnablePeerAccess(ctx, d1, d0), device.ErrClosed)

	other := []device.Option{device.WithSimulator(sim.New())}
	o1, err := device.Open(ctx, 1, other...)
	require.NoError(t, err)
	defer func() { require.NoError(t, o1.Close()) }()
	_, err = interop.CanAccessPeer(ctx, d0, o1)
	require.ErrorIs(t, err, device.ErrInvalidArgument)
	require.ErrorContains(t, err, "different backends")
	a, err := d0.MallocBytes(ctx, 64)
	require.NoError(t, err)
	b, err := o1.MallocBytes(ctx, 64)
	require.NoError(t, err)
	err = streams.Default(d0).Copy(ctx, a, b).Wait(ctx)
	require.ErrorIs(t, err, device.ErrWrongDevice)
	require.ErrorContains(t, err, "the devices belong to different backends")
	require.NoError(t, b.Close(ctx))
	require.NoError(t, a.Close(ctx))
	testdev.RequireUsable(t, d0)
}

// TestPeerKernelNeedsAccess: on the simulator, as on a GPU, a kernel touching another
// device's memory without peer access faults its device.
func TestPeerKernelNeedsAccess(t *testing.T) {
	ctx := testdev.Ctx(t)
	opts := []device.Option{device.WithSimulator(sim.New(sim.WithDevices(testdev.SimDevices)))}
	devs := testdev.All(t, ctx, opts)
	d0, d1 := devs[0], devs[1]
	k := addU32(t, ctx, d0)
	buf, err := d1.MallocBytes(ctx, 4*16)
	require.NoError(t, err)
	p, err := buf.DevicePtr(ctx)
	require.NoError(t, err)
	cfg := cuda.LaunchConfig{Grid: cuda.Dim3{X: 1, Y: 1, Z: 1}, Block: cuda.Dim3{X: 16, Y: 1, Z: 1}}

	require.NoError(t, interop.EnablePeerAccess(ctx, d0, d1))
	require.NoError(t, streams.Default(d0).Launch(ctx, k, cfg, p, uint32(1), int32(16)).Wait(ctx))
	require.NoError(t, interop.DisablePeerAccess(ctx, d0, d1))
	err = streams.Default(d0).Launch(ctx, k, cfg, p, uint32(1), int32(16)).Wait(ctx)
	require.ErrorIs(t, err, cudaerr.IllegalAddress)
	require.ErrorContains(t, err, "device 1's memory, not device 0's")
	// The fault is sticky, and so the whole process's: every other device fails with it too,
	// the one whose memory was touched and those that took no part.
	for _, d := range devs[1:] {
		_, err = d.MallocBytes(ctx, 64)
		require.ErrorIs(t, err, cudaerr.IllegalAddress, "device %d", d.Ordinal())
	}
}

// TestPeerCopy: Stream.Copy between two devices' buffers, both ways, on either device's
// stream, with or without peer access; and what it refuses. Every pair of devices, each once:
// one pair's run copies both ways on both devices' streams, 256 KiB at a time.
func TestPeerCopy(t *testing.T) {
	testdev.Backends(t, func(t *testing.T, opts []device.Option) {
		ctx := testdev.Ctx(t)
		devs := testdev.All(t, ctx, opts)
		for _, p := range testdev.Pairs(len(devs)) {
			if p[0] < p[1] {
				t.Run(fmt.Sprintf("%d-%d", p[0], p[1]), func(t *testing.T) { peerCopy(t, ctx, devs[p[0]], devs[p[1]]) })
			}
		}
	})
}

// peerCopy is TestPeerCopy for one pair of devices.
func peerCopy(t *testing.T, ctx context.Context, d0, d1 *device.Device) {
	const n = 1 << 16
	a, err := d0.MallocBytes(ctx, 4*n)
	require.NoError(t, err)
	b, err := d1.MallocBytes(ctx, 4*n)
	require.NoError(t, err)
	testdev.Write(t, ctx, a, seq(n, 1))

	s0, s1 := streams.Default(d0), streams.Default(d1)
	require.NoError(t, s0.Copy(ctx, b, a).Wait(ctx)) // pushed by the source's stream
	got := make([]uint32, n)
	testdev.Read(t, ctx, got, b)
	require.Equal(t, seq(n, 1), got)

	testdev.Write(t, ctx, b, seq(n, 100))
	require.NoError(t, s0.Copy(ctx, a, b).Wait(ctx)) // pulled by the destination's stream
	testdev.Read(t, ctx, got, a)
	require.Equal(t, seq(n, 100), got)

	testdev.Write(t, ctx, a, seq(n, 7))
	require.NoError(t, s1.Copy(ctx, b.Slice(4*16, 4*32), a.Slice(0, 4*32)).Wait(ctx))
	testdev.Read(t, ctx, got, b)
	require.Equal(t, seq(32, 7), got[16:48])
	require.Equal(t, uint32(100+15), got[15])

	// Size mismatch, on either side of the pair.
	err = s1.Copy(ctx, b.Slice(0, 4), a).Wait(ctx)
	require.ErrorIs(t, err, device.ErrOutOfRange)
	err = s0.Copy(ctx, b.Slice(0, 4), a).Wait(ctx)
	require.ErrorIs(t, err, device.ErrOutOfRange)
	require.ErrorContains(t, err, "into a 4-byte destination")

	// A closed buffer, local or foreign.
	c, err := d1.MallocBytes(ctx, 64)
	require.NoError(t, err)
	require.NoError(t, c.Close(ctx))
	require.ErrorIs(t, s0.Copy(ctx, a, c).Wait(ctx), device.ErrClosed)
	require.ErrorIs(t, s1.Copy(ctx, c, a).Wait(ctx), device.ErrClosed)
	require.ErrorIs(t, s0.Copy(ctx, nil, b).Wait(ctx), device.ErrInvalidArgument)

	testdev.RequireUsable(t, d0)
	testdev.RequireUsable(t, d1)
	require.NoError(t, a.Close(ctx))
	require.NoError(t, b.Close(ctx))
}

// TestPeerCopyWrongDevices: a copy between two devices neither of which is the stream's, for
// every such choice of three devices.
func TestPeerCopyWrongDevices(t *testing.T) {
	ctx := testdev.Ctx(t)
	machine := sim.New(sim.WithDevices(testdev.SimDevices))
	devs := testdev.All(t, ctx, []device.Option{device.WithSimulator(machine)})
	bufs := make([]*device.Buffer, len(devs))
	for i, d := range devs {
		var err error
		bufs[i], err = d.MallocBytes(ctx, 64)
		require.NoError(t, err)
	}
	for _, p := range testdev.Pairs(len(devs)) {
		from, to := p[0], p[1]
		for on, d := range devs {
			if on == from || on == to {
				continue
			}
			err := streams.Default(d).Copy(ctx, bufs[to], bufs[from]).Wait(ctx)
			require.ErrorIs(t, err, device.ErrWrongDevice)
			require.ErrorContains(t, err, fmt.Sprintf("from device %d to device %d queued on a stream of device %d", from, to, on))
		}
	}
	for _, d := range devs {
		testdev.RequireUsable(t, d)
	}
}

// TestPeerCopyHoldsForeignBuffer: the other device's buffer is not freed under a copy: its
// Close waits for the copy.
func TestPeerCopyHoldsForeignBuffer(t *testing.T) {
	ctx := testdev.Ctx(t)
	// Device 0 runs its stream work 200 times slower: its copy is still running when device
	// 1's buffer is closed.
	machine := sim.New(sim.WithSlowdown(0, 200))
	devs := testdev.All(t, ctx, []device.Option{device.WithSimulator(machine)})
	d0, d1 := devs[0], devs[1]
	const n = 256 << 10
	a, err := d0.MallocBytes(ctx, n)
	require.NoError(t, err)
	src, err := d1.MallocBytes(ctx, n)
	require.NoError(t, err)
	require.NoError(t, streams.Default(d1).Memset(ctx, src, 0x3c).Wait(ctx))

	f := streams.Default(d0).Copy(ctx, a, src)
	start := time.Now()
	require.NoError(t, src.Close(ctx))
	closed := time.Since(start)
	// The hold is given back as the copy's future completes, a moment before the future says
	// so (core.Tracking.Done runs first), so Close may return that moment before Ready does.
	// A Close that did not wait would return the copy's whole run (hundreds of milliseconds
	// on the slowed device) before it.
	require.Eventually(t, f.Ready, 100*time.Millisecond, time.Millisecond,
		"the buffer was freed before the copy that reads it finished (Close returned after %v)", closed)
	require.NoError(t, f.Wait(ctx))
	got := make([]uint8, n)
	testdev.Read(t, ctx, got, a)
	for i, v := range got {
		if v != 0x3c {
			t.Fatalf("byte %d = %#x after the copy, want 0x3c", i, v)
		}
	}
}

// TestPeerCopyConcurrent: many goroutines copy between devices at once, over every ordered
// pair, on streams of the source or of the destination, while (on the simulator) others
// enable and disable access for every pair. Workers are spread over the pairs, and rounds
// shrink as workers grow, so that eight GPUs (56 pairs) do about the work two do.
func TestPeerCopyConcurrent(t *testing.T) {
	testdev.Backends(t, testPeerCopyConcurrent)
}

func testPeerCopyConcurrent(t *testing.T, opts []device.Option) {
	ctx := testdev.Ctx(t)
	devs := testdev.All(t, ctx, opts)
	pairs := testdev.Pairs(len(devs))
	const n = 1024
	workers := max(16, 2*len(pairs)) // each pair at least twice: once on each end's stream
	rounds := max(2, 20*16/workers)
	var wg sync.WaitGroup
	errs := make(chan error, workers+len(pairs))
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- func() error {
				p := pairs[w%len(pairs)]
				from, to := devs[p[0]], devs[p[1]]
				on := from // the stream's device: the source's or the destination's
				if (w/len(pairs))%2 == 1 {
					on = to
				}
				s, err := streams.New(ctx, on)
				if err != nil {
					return err
				}
				defer s.Close(ctx)
				src, err := from.MallocBytes(ctx, 4*n)
				if err != nil {
					return err
				}
				defer src.Close(ctx)
				dst, err := to.MallocBytes(ctx, 4*n)
				if err != nil {
					return err
				}
				defer dst.Close(ctx)
				for r := range rounds {
					want := seq(n, uint32(w*1000+r))
					if err := streams.CopyToDevice(ctx, streams.Default(from), src, want).Wait(ctx); err != nil {
						return err
					}
					if err := s.Copy(ctx, dst, src).Wait(ctx); err != nil {
						return err
					}
					got := make([]uint32, n)
					if err := streams.CopyFromDevice(ctx, streams.Default(to), got, dst).Wait(ctx); err != nil {
						return err
					}
					for i := range got {
						if got[i] != want[i] {
							return fmt.Errorf("worker %d (device %d to %d, on %d) round %d: word %d = %d, want %d",
								w, from.Ordinal(), to.Ordinal(), on.Ordinal(), r, i, got[i], want[i])
						}
					}
				}
				return nil
			}()
		}()
	}
	// A GPU's mappings are not toggled under running copies here.
	if devs[0].Backend() == device.BackendSim {
		for _, p := range pairs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs <- func() error {
					for range rounds {
						if err := interop.EnablePeerAccess(ctx, devs[p[0]], devs[p[1]]); err != nil {
							return err
						}
						if err := interop.DisablePeerAccess(ctx, devs[p[0]], devs[p[1]]); err != nil {
							return err
						}
					}
					return nil
				}()
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}
