package sim

import (
	"bytes"
	"fmt"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

func TestBackendInfo(t *testing.T) {
	var _ backend.Backend = New()
	b := New()
	assert.Equal(t, "sim", b.Name())
	v, err := b.RuntimeVersion()
	require.NoError(t, err)
	assert.Equal(t, 13000, v)
	v, err = b.DriverVersion()
	require.NoError(t, err)
	assert.Equal(t, 13000, v)
	n, err := b.DeviceCount()
	require.NoError(t, err)
	assert.Equal(t, 2, n)

	for _, bad := range []int{-1, 2, 100} {
		_, err := b.Open(bad)
		requireCode(t, err, cudaerr.InvalidDevice)
	}
	d0, err := b.Open(0)
	require.NoError(t, err)
	again, err := b.Open(0)
	require.NoError(t, err)
	assert.Same(t, d0, again, "the primary context is shared")
	assert.Equal(t, 0, d0.Ordinal())

	n, err = New(WithDevices(0)).DeviceCount()
	requireCode(t, err, cudaerr.NoDevice)
	assert.Zero(t, n)
	n, err = New(WithDevices(5)).DeviceCount()
	require.NoError(t, err)
	assert.Equal(t, 5, n)
}

func TestDeviceProperties(t *testing.T) {
	_, d0, d1 := open(t)
	name, err := d0.Name()
	require.NoError(t, err)
	assert.Equal(t, "gpuactor simulator", name)
	_, named, _ := open(t, WithName("H100 (sim)"))
	name, err = named.Name()
	require.NoError(t, err)
	assert.Equal(t, "H100 (sim)", name)

	all := []backend.Attr{
		backend.AttrMaxThreadsPerBlock, backend.AttrMaxBlockDimX, backend.AttrMaxBlockDimY,
		backend.AttrMaxBlockDimZ, backend.AttrMaxGridDimX, backend.AttrMaxGridDimY, backend.AttrMaxGridDimZ,
		backend.AttrMaxSharedMemoryPerBlock, backend.AttrTotalConstantMemory, backend.AttrWarpSize,
		backend.AttrMaxRegistersPerBlock, backend.AttrClockRate, backend.AttrMultiProcessorCount,
		backend.AttrKernelExecTimeout, backend.AttrIntegrated, backend.AttrCanMapHostMemory,
		backend.AttrComputeMode, backend.AttrConcurrentKernels, backend.AttrECCEnabled, backend.AttrPCIBusID,
		backend.AttrPCIDeviceID, backend.AttrTCCDriver, backend.AttrMemoryClockRate,
		backend.AttrGlobalMemoryBusWidth, backend.AttrL2CacheSize, backend.AttrMaxThreadsPerMultiProcessor,
		backend.AttrAsyncEngineCount, backend.AttrUnifiedAddressing, backend.AttrPCIDomainID,
		backend.AttrComputeCapabilityMajor, backend.AttrComputeCapabilityMinor,
		backend.AttrStreamPrioritiesSupported, backend.AttrManagedMemory, backend.AttrIsMultiGpuBoard,
		backend.AttrConcurrentManagedAccess, backend.AttrCooperativeLaunch,
		backend.AttrMaxSharedMemoryPerBlockOptin, backend.AttrMemoryPoolsSupported,
	}
	for _, a := range all {
		_, err := d0.Attribute(a)
		assert.NoError(t, err, "attribute %d", a)
	}
	want := map[backend.Attr]int{
		backend.AttrComputeCapabilityMajor: 9, backend.AttrComputeCapabilityMinor: 0,
		backend.AttrWarpSize: 32, backend.AttrMaxThreadsPerBlock: 1024,
		backend.AttrMaxBlockDimX: 1024, backend.AttrMaxBlockDimY: 1024, backend.AttrMaxBlockDimZ: 64,
		backend.AttrMaxGridDimX: 1<<31 - 1, backend.AttrMaxGridDimY: 65535, backend.AttrMaxGridDimZ: 65535,
		backend.AttrMaxSharedMemoryPerBlock: 48 << 10, backend.AttrMaxSharedMemoryPerBlockOptin: 227 << 10,
		backend.AttrUnifiedAddressing: 1, backend.AttrConcurrentKernels: 1, backend.AttrMemoryPoolsSupported: 1,
		backend.AttrStreamPrioritiesSupported: 1, backend.AttrPCIBusID: 1,
	}
	for a, v := range want {
		got, err := d0.Attribute(a)
		require.NoError(t, err)
		assert.Equal(t, v, got, "attribute %d", a)
	}
	for _, a := range []backend.Attr{backend.AttrMultiProcessorCount, backend.AttrClockRate,
		backend.AttrMemoryClockRate, backend.AttrGlobalMemoryBusWidth, backend.AttrL2CacheSize} {
		v, err := d0.Attribute(a)
		require.NoError(t, err)
		assert.Positive(t, v, "attribute %d", a)
	}

	_, err = d0.Attribute(backend.Attr(9999))
	requireCode(t, err, cudaerr.InvalidValue)
	requireCode(t, d0.LastError(), cudaerr.InvalidValue)
	assert.NoError(t, d0.LastError(), "LastError clears")

	id0, err := d0.PCIBusID()
	require.NoError(t, err)
	id1, err := d1.PCIBusID()
	require.NoError(t, err)
	assert.Equal(t, "0000:01:00.0", id0)
	assert.Equal(t, "0000:02:00.0", id1)

	free, total, err := d0.MemInfo()
	require.NoError(t, err)
	assert.Equal(t, DefaultMemory, total)
	assert.Equal(t, total, free)

	least, greatest, err := d0.StreamPriorityRange()
	require.NoError(t, err)
	assert.Equal(t, 0, least)
	assert.Equal(t, -5, greatest)
}

func TestMallocCopyRoundTrip(t *testing.T) {
	_, d0, _ := open(t)
	s := mkStream(t, d0)
	for _, n := range []uint64{1, 3, 7, 255, 256, 257, 4097, 1<<20 + 7} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			free0, _, err := d0.MemInfo()
			require.NoError(t, err)
			p, q := malloc(t, d0, n), malloc(t, d0, n)
			assert.Zero(t, uint64(p)%256, "256-byte aligned")
			assert.NotEqual(t, p, q)
			free1, _, err := d0.MemInfo()
			require.NoError(t, err)
			rounded := (n + 255) &^ 255
			assert.Equal(t, 2*rounded, free0-free1)

			src := make([]byte, n)
			for i := range src {
				src[i] = byte(i*7 + 1)
			}
			require.NoError(t, d0.CopyHtoD(p, hostPtr(src), n, s))
			require.NoError(t, d0.CopyDtoD(q, p, n, s))
			out := make([]byte, n)
			require.NoError(t, d0.CopyDtoH(hostPtr(out), q, n, s))
			require.NoError(t, d0.StreamSynchronize(s))
			assert.True(t, bytes.Equal(src, out), "round trip")

			require.NoError(t, d0.Memset(q, 0xab, n, s))
			require.NoError(t, d0.CopyDtoH(hostPtr(out), q, n, s))
			require.NoError(t, d0.StreamSynchronize(s))
			assert.Equal(t, bytes.Repeat([]byte{0xab}, int(n)), out)

			require.NoError(t, d0.Free(p))
			require.NoError(t, d0.Free(q))
			free2, _, err := d0.MemInfo()
			require.NoError(t, err)
			assert.Equal(t, free0, free2)
		})
	}
}

func TestAddressLayout(t *testing.T) {
	b, d0, d1 := open(t)
	p0, p1 := malloc(t, d0, 100), malloc(t, d1, 100)
	assert.Equal(t, d0, b.ownerOf(uint64(p0)))
	assert.Equal(t, d1, b.ownerOf(uint64(p1)))
	next := malloc(t, d0, 256)
	assert.GreaterOrEqual(t, uint64(next)-uint64(p0), 256+guardGap, "a guard gap follows every allocation")

	// The backing bytes are aligned for any element type.
	dev := d0.(*device)
	for _, n := range []uint64{1, 24, 100, 4096} {
		p := malloc(t, d0, n)
		mem, detail := dev.resolve(p, n)
		require.Empty(t, detail)
		assert.Zero(t, uintptr(unsafe.Pointer(unsafe.SliceData(mem)))%64)
		assert.Equal(t, int(n), cap(mem), "a kernel cannot grow past its allocation")
	}

	z, err := d0.Malloc(0)
	require.NoError(t, err)
	assert.Zero(t, z, "Malloc(0) is the null pointer, as cudaMalloc")
	require.NoError(t, d0.Free(0))
}

func TestCopyBounds(t *testing.T) {
	_, d0, d1 := open(t)
	s := mkStream(t, d0)
	p := malloc(t, d0, 100)
	foreign := malloc(t, d1, 100)
	freed := malloc(t, d0, 64)
	require.NoError(t, d0.Free(freed))
	host := make([]byte, 4096)
	h := hostPtr(host)

	cases := []struct {
		name string
		call func() error
		want string // in the message
	}{
		{"HtoD past end", func() error { return d0.CopyHtoD(p, h, 101, s) }, "past the end"},
		{"HtoD one past end", func() error { return d0.CopyHtoD(p+100, h, 1, s) }, fmt.Sprintf("%#x", uint64(p+100))},
		{"HtoD into guard gap", func() error { return d0.CopyHtoD(p+400, h, 1, s) }, "outside the 100-byte allocation"},
		{"HtoD foreign device", func() error { return d0.CopyHtoD(foreign, h, 10, s) }, "device 1's memory"},
		{"HtoD freed", func() error { return d0.CopyHtoD(freed, h, 10, s) }, "freed"},
		{"HtoD null", func() error { return d0.CopyHtoD(0, h, 10, s) }, "null"},
		{"HtoD nil host", func() error { return d0.CopyHtoD(p, nil, 10, s) }, "nil host"},
		{"HtoD not a device address", func() error { return d0.CopyHtoD(backend.DevicePtr(0x1000), h, 1, s) }, "not a device address"},
		{"DtoH past end", func() error { return d0.CopyDtoH(h, p+50, 51, s) }, "past the end"},
		{"DtoH foreign device", func() error { return d0.CopyDtoH(h, foreign, 10, s) }, "device 1's memory"},
		{"DtoH freed", func() error { return d0.CopyDtoH(h, freed, 1, s) }, "freed"},
		{"DtoD src past end", func() error { return d0.CopyDtoD(foreign, p, 101, s) }, "source"},
		{"DtoD dst past end", func() error { return d0.CopyDtoD(p+1, foreign, 100, s) }, "destination"},
		{"DtoD freed", func() error { return d0.CopyDtoD(p, freed, 1, s) }, "freed"},
		{"Memset past end", func() error { return d0.Memset(p, 1, 101, s) }, "past the end"},
		{"Memset foreign", func() error { return d0.Memset(foreign, 1, 1, s) }, "device 1's memory"},
	}
	for _, c := range cases {
		err := c.call()
		requireCode(t, err, cudaerr.InvalidValue, c.name)
		assert.Contains(t, err.Error(), c.want, c.name)
		requireCode(t, d0.LastError(), cudaerr.InvalidValue, c.name)
		assert.NoError(t, d0.LastError(), c.name)
	}

	// Still usable: the mistakes were caught at the call, nothing faulted.
	src := []byte("hello, device")
	require.NoError(t, d0.CopyHtoD(p, hostPtr(src), uint64(len(src)), s))
	require.NoError(t, d0.CopyDtoD(foreign, p, uint64(len(src)), s), "a peer copy between devices is legal")
	require.NoError(t, d0.StreamSynchronize(s)) // device 1's streams are not ordered after device 0's
	out := make([]byte, len(src))
	require.NoError(t, d1.CopyDtoH(hostPtr(out), foreign, uint64(len(out)), 0))
	assert.Equal(t, src, out)
	require.NoError(t, d0.Synchronize())
	require.NoError(t, d1.Synchronize())
	require.NoError(t, d0.CopyHtoD(p, nil, 0, s), "zero bytes is a no-op")
}

func TestFreeMistakes(t *testing.T) {
	_, d0, d1 := open(t)
	p := malloc(t, d0, 100)
	foreign := malloc(t, d1, 100)

	err := d0.Free(p + 8)
	requireCode(t, err, cudaerr.InvalidValue)
	assert.Contains(t, err.Error(), "not its start")
	requireCode(t, d0.Free(foreign), cudaerr.InvalidValue)
	requireCode(t, d0.Free(backend.DevicePtr(12345)), cudaerr.InvalidValue)

	require.NoError(t, d0.Free(p))
	err = d0.Free(p)
	requireCode(t, err, cudaerr.InvalidValue, "double free")
	assert.Contains(t, err.Error(), "freed")
	require.NoError(t, d0.Free(0))
	require.NoError(t, d1.Free(foreign))
	_, err = d0.Malloc(10)
	require.NoError(t, err, "still usable")
}

func TestOutOfMemory(t *testing.T) {
	_, d0, _ := open(t, WithMemory(1<<20))
	big := malloc(t, d0, 768<<10)
	_, err := d0.Malloc(512 << 10)
	requireCode(t, err, cudaerr.MemoryAllocation)
	assert.False(t, cudaerr.IsSticky(err))
	requireCode(t, d0.LastError(), cudaerr.MemoryAllocation)
	small := malloc(t, d0, 256<<10)
	free, total, err := d0.MemInfo()
	require.NoError(t, err)
	assert.Equal(t, uint64(0), free)
	assert.Equal(t, uint64(1<<20), total)
	_, err = d0.Malloc(1)
	requireCode(t, err, cudaerr.MemoryAllocation)
	require.NoError(t, d0.Free(big))
	malloc(t, d0, 512<<10)
	require.NoError(t, d0.Free(small))

	_, err = d0.Malloc(1 << 63)
	requireCode(t, err, cudaerr.MemoryAllocation)
	_, err = d0.Malloc(^uint64(0))
	requireCode(t, err, cudaerr.MemoryAllocation)
}

func TestAddressReuseAfterRangeExhausted(t *testing.T) {
	// Place and free 64 GiB spans until the device's 1 TiB range is used up: the allocator
	// then reuses freed addresses. Driven directly, so no backing RAM is involved.
	var m deviceMemory
	m.init(0, 1<<40)
	span := uint64(1 << 36) // 64 GiB
	var addrs []uint64
	for range 40 { // 40 × 64 GiB > 1 TiB
		m.mu.Lock()
		addr, i, ok := m.placeLocked(span)
		require.True(t, ok)
		a := &allocation{addr: addr, span: span, size: 1}
		m.allocs = append(m.allocs[:i], append([]*allocation{a}, m.allocs[i:]...)...)
		m.mu.Unlock()
		addrs = append(addrs, addr)
		if len(addrs) > 1 && len(addrs)%5 != 0 { // keep every fifth: reuse must fit between them
			require.True(t, m.remove(addr))
		}
	}
	for _, a := range addrs[1:] {
		assert.Less(t, a, m.stop)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := 1; i < len(m.allocs); i++ {
		prev, cur := m.allocs[i-1], m.allocs[i]
		assert.GreaterOrEqual(t, cur.addr, prev.addr+prev.span, "live allocations never overlap")
	}
}

func TestHostMemory(t *testing.T) {
	_, d0, d1 := open(t)
	p, err := d0.HostAlloc(100, backend.HostAllocPortable)
	require.NoError(t, err)
	assert.Zero(t, uintptr(p)%64)
	buf := unsafe.Slice((*byte)(p), 100)
	buf[99] = 7
	requireCode(t, d0.HostRegister(p, 10, 0), cudaerr.HostMemoryAlreadyRegistered, "HostAlloc memory is already pinned")
	require.NoError(t, d1.HostFree(p), "pinned memory is the machine's, any device may free it")
	requireCode(t, d0.HostFree(p), cudaerr.InvalidValue, "double free")
	local := make([]byte, 64)
	requireCode(t, d0.HostFree(hostPtr(local)), cudaerr.InvalidValue)
	require.NoError(t, d0.HostFree(nil))
	_, err = d0.HostAlloc(10, 1<<7)
	requireCode(t, err, cudaerr.InvalidValue)
	z, err := d0.HostAlloc(0, 0)
	require.NoError(t, err)
	assert.Nil(t, z)

	reg := make([]byte, 4096)
	rp := hostPtr(reg)
	require.NoError(t, d0.HostRegister(rp, 4096, backend.HostRegisterPortable))
	requireCode(t, d0.HostRegister(rp, 4096, 0), cudaerr.HostMemoryAlreadyRegistered)
	requireCode(t, d0.HostRegister(unsafe.Add(rp, 100), 10, 0), cudaerr.HostMemoryAlreadyRegistered, "inside")
	requireCode(t, d0.HostUnregister(unsafe.Add(rp, 100)), cudaerr.HostMemoryNotRegistered, "not the start")
	require.NoError(t, d0.HostUnregister(rp))
	requireCode(t, d0.HostUnregister(rp), cudaerr.HostMemoryNotRegistered)
	requireCode(t, d0.HostRegister(nil, 10, 0), cudaerr.InvalidValue)
	requireCode(t, d0.HostRegister(rp, 0, 0), cudaerr.InvalidValue)
	requireCode(t, d0.HostRegister(rp, 10, 1<<6), cudaerr.InvalidValue)
}

func TestPinnedAndPageableCopySemantics(t *testing.T) {
	_, d0, _ := open(t)
	g := newGate(t)
	k := kernels(t, d0, map[string]backend.SimKernel{"wait": func(*backend.KernelCall) error { <-g.ch; return nil }})
	s := mkStream(t, d0)
	p, q := malloc(t, d0, 1), malloc(t, d0, 1)

	launch(t, d0, k["wait"], s)
	pageable := []byte{1}
	require.NoError(t, d0.CopyHtoD(p, hostPtr(pageable), 1, s))
	pageable[0] = 2 // allowed at once: the pageable source was staged

	pinnedPtr, err := d0.HostAlloc(1, 0)
	require.NoError(t, err)
	pinned := unsafe.Slice((*byte)(pinnedPtr), 1)
	pinned[0] = 1
	require.NoError(t, d0.CopyHtoD(q, pinnedPtr, 1, s))
	pinned[0] = 2 // a GPU would read this later value: the pinned copy reads at execution

	// Into pinned memory CopyDtoH is asynchronous.
	require.NoError(t, d0.CopyDtoH(pinnedPtr, p, 1, s))
	assert.Equal(t, byte(2), pinned[0], "not copied yet: the stream is blocked")
	assert.ErrorIs(t, d0.StreamQuery(s), cudaerr.NotReady)
	g.release()
	require.NoError(t, d0.StreamSynchronize(s))
	assert.Equal(t, byte(1), pinned[0], "the staged pageable value")

	// Into pageable memory CopyDtoH returns once the data is there.
	out := make([]byte, 1)
	require.NoError(t, d0.CopyDtoH(hostPtr(out), q, 1, s))
	assert.Equal(t, byte(2), out[0], "the pinned source was read when the stream reached the copy")
	require.NoError(t, d0.HostFree(pinnedPtr))
}
