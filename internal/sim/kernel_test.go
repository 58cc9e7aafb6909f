package sim

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

func TestModules(t *testing.T) {
	_, d0, d1 := open(t)
	spec := backend.ModuleSpec{SimKernels: map[string]backend.SimKernel{"fill": fillKernel, "nilfn": nil}}
	m, err := d0.LoadModule(spec)
	require.NoError(t, err)
	k1, err := d0.ModuleKernel(m, "fill")
	require.NoError(t, err)
	k2, err := d0.ModuleKernel(m, "fill")
	require.NoError(t, err)
	assert.Equal(t, k1, k2, "one kernel, one handle")

	_, err = d0.ModuleKernel(m, "saxpy")
	requireCode(t, err, cudaerr.SymbolNotFound)
	assert.Equal(t, cudaerr.Code(500), cudaerr.SymbolNotFound)
	assert.Contains(t, err.Error(), `kernel "saxpy" has no Go implementation registered for the simulator`)
	assert.Contains(t, err.Error(), `"fill"`, "the message lists what is registered")
	_, err = d0.ModuleKernel(m, "nilfn")
	requireCode(t, err, cudaerr.SymbolNotFound, "a nil func is not an implementation")

	imageOnly, err := d0.LoadModule(backend.ModuleSpec{Image: []byte("// ptx"), ImageKind: backend.ImagePTX})
	require.NoError(t, err, "a module with only an image loads: its kernels just cannot run here")
	_, err = d0.ModuleKernel(imageOnly, "fill")
	requireCode(t, err, cudaerr.SymbolNotFound)
	_, err = d0.LoadModule(backend.ModuleSpec{})
	requireCode(t, err, cudaerr.InvalidValue)

	// Modules belong to the device that loaded them.
	_, err = d1.ModuleKernel(m, "fill")
	requireCode(t, err, cudaerr.InvalidResourceHandle)
	s1 := mkStream(t, d1)
	requireCode(t, d1.Launch(k1, backend.Dim3{X: 1, Y: 1, Z: 1}, backend.Dim3{X: 1, Y: 1, Z: 1}, 0, s1, nil),
		cudaerr.InvalidResourceHandle)
	requireCode(t, d1.UnloadModule(m), cudaerr.InvalidResourceHandle)

	// The caller's map is copied at load.
	spec.SimKernels["late"] = fillKernel
	_, err = d0.ModuleKernel(m, "late")
	requireCode(t, err, cudaerr.SymbolNotFound)

	// Queued launches survive an unload; the handles do not.
	s := mkStream(t, d0)
	p := malloc(t, d0, 8)
	launch(t, d0, k1, s, ptrArg(p), u64Arg(1), f64Arg(5))
	require.NoError(t, d0.UnloadModule(m))
	require.NoError(t, d0.StreamSynchronize(s))
	assert.Equal(t, []float64{5}, readFloats(t, d0, p, 1, s))
	requireCode(t, d0.Launch(k1, backend.Dim3{X: 1, Y: 1, Z: 1}, backend.Dim3{X: 1, Y: 1, Z: 1}, 0, s, nil),
		cudaerr.InvalidResourceHandle)
	_, err = d0.ModuleKernel(m, "fill")
	requireCode(t, err, cudaerr.InvalidResourceHandle)
	requireCode(t, d0.UnloadModule(m), cudaerr.InvalidResourceHandle)
	require.NoError(t, d0.Synchronize(), "none of that faulted the device")
}

func TestLaunchConfiguration(t *testing.T) {
	_, d0, _ := open(t)
	var seen atomic.Pointer[backend.KernelCall]
	k := kernels(t, d0, map[string]backend.SimKernel{
		"record": func(c *backend.KernelCall) error { seen.Store(c); return nil },
	})["record"]
	s := mkStream(t, d0)

	bad := []struct {
		grid, block backend.Dim3
		shmem       uint32
	}{
		{dim(0, 1, 1), dim(1, 1, 1), 0},
		{dim(1, 0, 1), dim(1, 1, 1), 0},
		{dim(1, 1, 1), dim(1, 1, 0), 0},
		{dim(1, 1, 1), dim(0, 0, 0), 0},
		{dim(1, 1, 1), dim(1025, 1, 1), 0},
		{dim(1, 1, 1), dim(1, 1025, 1), 0},
		{dim(1, 1, 1), dim(1, 1, 65), 0},
		{dim(1, 1, 1), dim(64, 32, 1), 0}, // 2048 threads
		{dim(1<<31, 1, 1), dim(1, 1, 1), 0},
		{dim(1, 65536, 1), dim(1, 1, 1), 0},
		{dim(1, 1, 65536), dim(1, 1, 1), 0},
		{dim(1, 1, 1), dim(32, 1, 1), 227<<10 + 1},
	}
	for _, c := range bad {
		err := d0.Launch(k, c.grid, c.block, c.shmem, s, nil)
		requireCode(t, err, cudaerr.InvalidConfiguration, "grid %v block %v shmem %d", c.grid, c.block, c.shmem)
		assert.False(t, cudaerr.IsSticky(err))
	}
	requireCode(t, d0.LastError(), cudaerr.InvalidConfiguration)

	// Above the per-block default a launch needs the kernel's limit raised first.
	requireCode(t, d0.Launch(k, dim(1, 1, 1), dim(32, 1, 1), 48<<10+1, s, nil), cudaerr.InvalidValue)
	require.NoError(t, d0.FuncSetAttribute(k, backend.FuncAttrMaxDynamicSharedMemorySize, 227<<10))
	good := []struct {
		grid, block backend.Dim3
		shmem       uint32
	}{
		{dim(1, 1, 1), dim(1024, 1, 1), 0},
		{dim(1, 1, 1), dim(32, 32, 1), 48 << 10},
		{dim(1, 1, 1), dim(16, 1, 64), 227 << 10},
		{dim(1<<31-1, 65535, 65535), dim(1, 1, 1), 0},
	}
	for _, c := range good {
		args := []backend.Arg{u64Arg(1), f64Arg(2.5)}
		require.NoError(t, d0.Launch(k, c.grid, c.block, c.shmem, s, args))
		args[0] = u64Arg(99) // the launch copied its arguments
		require.NoError(t, d0.StreamSynchronize(s))
		call := seen.Load()
		require.NotNil(t, call)
		assert.Equal(t, c.grid, call.Grid)
		assert.Equal(t, c.block, call.Block)
		assert.Equal(t, c.shmem, call.SharedMem)
		assert.Equal(t, c.grid.Count()*c.block.Count(), call.Threads())
		assert.Equal(t, uint64(1), call.Uint64(0))
		assert.Equal(t, 2.5, call.Float64(1))
	}
}

func TestKernelMemoryView(t *testing.T) {
	_, d0, d1 := open(t)
	p := malloc(t, d0, 100)
	foreign := malloc(t, d1, 8)
	type result struct {
		aligned          bool
		extent, extentIn uint64
		zeroErr          error
		foreignErr       error
		pastErr          error
	}
	var res atomic.Pointer[result]
	k := kernels(t, d0, map[string]backend.SimKernel{
		"probe": func(c *backend.KernelCall) error {
			var r result
			b, err := c.Mem.Bytes(c.Ptr(0), 100)
			if err != nil {
				return err
			}
			r.aligned = uintptr(unsafe.Pointer(&b[0]))%16 == 0
			r.extent, _ = c.Mem.Extent(c.Ptr(0))
			r.extentIn, _ = c.Mem.Extent(c.Ptr(0) + 40)
			_, r.zeroErr = c.Mem.Bytes(0, 0)
			_, r.foreignErr = c.Mem.Bytes(c.Ptr(1), 8)
			_, r.pastErr = c.Mem.Bytes(c.Ptr(0)+96, 8)
			res.Store(&r)
			return nil // the kernel handled the errors: no access happened, no fault
		},
	})
	s := mkStream(t, d0)
	launch(t, d0, k["probe"], s, ptrArg(p), ptrArg(foreign))
	require.NoError(t, d0.StreamSynchronize(s))
	r := res.Load()
	require.NotNil(t, r)
	assert.True(t, r.aligned)
	assert.Equal(t, uint64(100), r.extent)
	assert.Equal(t, uint64(60), r.extentIn)
	assert.NoError(t, r.zeroErr, "zero bytes are always accessible")
	requireCode(t, r.foreignErr, cudaerr.IllegalAddress)
	assert.Contains(t, r.foreignErr.Error(), fmt.Sprintf("%#x", uint64(foreign)))
	assert.Contains(t, r.foreignErr.Error(), "device 1's memory")
	requireCode(t, r.pastErr, cudaerr.IllegalAddress)
	assert.Contains(t, r.pastErr.Error(), "past the end")
	require.NoError(t, d0.Synchronize())
}

// With faults confined (as isolated devices on GPUs), a kernel's fault stays on its device;
// TestKernelFaultCodes has the other device failing with it, as in one process on GPUs.
func TestKernelFaultIsStickyPerDevice(t *testing.T) {
	opt, logs := observed()
	_, d0, d1 := open(t, opt, WithConfinedFaults())
	k := kernels(t, d0, map[string]backend.SimKernel{
		"overrun": func(c *backend.KernelCall) error {
			cuda.SimSlice[float64](c, 0, 4) // 32 bytes of a 16-byte allocation
			return nil
		},
	})
	s := mkStream(t, d0)
	p := malloc(t, d0, 16)
	e, err := d0.EventCreate(0)
	require.NoError(t, err)
	launch(t, d0, k["overrun"], s, ptrArg(p))
	var after atomic.Bool
	// The stream runs the kernel while this goroutine goes on, so the fault may already have
	// landed: then the device refuses the host function, as CUDA does after a sticky error.
	if err := d0.LaunchHostFunc(s, func() { after.Store(true) }); err != nil {
		requireCode(t, err, cudaerr.IllegalAddress)
	}

	err = d0.StreamSynchronize(s)
	requireCode(t, err, cudaerr.IllegalAddress)
	assert.True(t, cudaerr.IsSticky(err))
	assert.Contains(t, err.Error(), `kernel "overrun"`)
	assert.Contains(t, err.Error(), fmt.Sprintf("%#x", uint64(p)))
	assert.False(t, after.Load(), "host functions queued after a fault are not called")

	// Every later call on the device fails with the sticky error, and it stays.
	requireCode(t, d0.Synchronize(), cudaerr.IllegalAddress)
	_, err = d0.Malloc(8)
	requireCode(t, err, cudaerr.IllegalAddress)
	requireCode(t, d0.Free(p), cudaerr.IllegalAddress)
	requireCode(t, d0.StreamQuery(s), cudaerr.IllegalAddress)
	requireCode(t, d0.EventRecord(e, s), cudaerr.IllegalAddress)
	requireCode(t, d0.Memset(p, 0, 1, s), cudaerr.IllegalAddress)
	_, err = d0.StreamCreate(0, 0)
	requireCode(t, err, cudaerr.IllegalAddress)
	_, _, err = d0.MemInfo()
	requireCode(t, err, cudaerr.IllegalAddress)
	requireCode(t, d0.LastError(), cudaerr.IllegalAddress)
	requireCode(t, d0.LastError(), cudaerr.IllegalAddress, "LastError cannot clear a sticky error")
	_, err = d0.Attribute(backend.AttrWarpSize)
	require.NoError(t, err, "device queries still answer")
	assert.Equal(t, 1, logs.FilterMessageSnippet("sim device fault").Len())

	// The other device is unaffected.
	s1 := mkStream(t, d1)
	k1 := kernels(t, d1, map[string]backend.SimKernel{"fill": fillKernel})
	q := malloc(t, d1, 8)
	launch(t, d1, k1["fill"], s1, ptrArg(q), u64Arg(1), f64Arg(9))
	require.NoError(t, d1.StreamSynchronize(s1))
	assert.Equal(t, []float64{9}, readFloats(t, d1, q, 1, s1))
	require.NoError(t, d1.Synchronize())
	require.NoError(t, d1.LastError())
}

func TestKernelFaultCodes(t *testing.T) {
	cases := []struct {
		name string
		fn   backend.SimKernel
		want cudaerr.Code
	}{
		{"panic", func(*backend.KernelCall) error { panic("boom") }, cudaerr.LaunchFailure},
		{"error", func(*backend.KernelCall) error { return errors.New("bad input") }, cudaerr.LaunchFailure},
		{"non-sticky code", func(*backend.KernelCall) error { return cudaerr.InvalidValue }, cudaerr.LaunchFailure},
		{"device assert", func(*backend.KernelCall) error {
			return fmt.Errorf("check failed: %w", cudaerr.Assert)
		}, cudaerr.Assert},
		{"go index out of range", func(c *backend.KernelCall) error {
			xs := cuda.SimSlice[int32](c, 0, 2)
			i := int(c.Uint64(1))
			xs[i] = 1
			return nil
		}, cudaerr.IllegalAddress},
		{"memory error returned", func(c *backend.KernelCall) error {
			_, err := c.Mem.Bytes(c.Ptr(0), 1<<20)
			return err
		}, cudaerr.IllegalAddress},
		{"nil dereference", func(*backend.KernelCall) error {
			var p *int
			*p = 1
			return nil
		}, cudaerr.IllegalAddress},
		{"wrong argument kind", func(c *backend.KernelCall) error { c.Float32(1); return nil }, cudaerr.LaunchFailure},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, d0, d1 := open(t)
			k := kernels(t, d0, map[string]backend.SimKernel{"k": c.fn})
			s := mkStream(t, d0)
			p := malloc(t, d0, 8)
			launch(t, d0, k["k"], s, ptrArg(p), u64Arg(5))
			err := d0.Synchronize()
			requireCode(t, err, c.want)
			assert.True(t, cudaerr.IsSticky(err))
			requireCode(t, d0.StreamSynchronize(s), c.want)
			requireCode(t, d1.Synchronize(), c.want, "the process's other device")
		})
	}
}

// A faulting kernel's completion is never reported as success: an event recorded after it, and
// its stream, answer with the fault once they stop being not-ready, however the queries
// interleave with the fault (several goroutines query at once, to land in every gap). Each
// round is a new device, as the fault is sticky.
func TestFaultSeenByQueriesAsTheWorkCompletes(t *testing.T) {
	for i := range 200 {
		_, d0, _ := open(t)
		k := kernels(t, d0, map[string]backend.SimKernel{
			"overrun": func(c *backend.KernelCall) error {
				time.Sleep(50 * time.Microsecond) // the queriers are all running by now
				cuda.SimSlice[float64](c, 0, 4)
				return nil
			},
		})
		s := mkStream(t, d0)
		p := malloc(t, d0, 16)
		e, err := d0.EventCreate(backend.EventDisableTiming)
		require.NoError(t, err)
		launch(t, d0, k["overrun"], s, ptrArg(p))
		if err := d0.EventRecord(e, s); err != nil {
			requireCode(t, err, cudaerr.IllegalAddress) // this goroutine was held up past the fault
			continue
		}
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					qerr, serr := d0.EventQuery(e), d0.StreamQuery(s)
					if errors.Is(qerr, cudaerr.NotReady) || errors.Is(serr, cudaerr.NotReady) {
						continue
					}
					assert.ErrorIs(t, qerr, cudaerr.IllegalAddress, "round %d: the event query", i)
					assert.ErrorIs(t, serr, cudaerr.IllegalAddress, "round %d: the stream query", i)
					return
				}
			}()
		}
		wg.Wait()
		if t.Failed() {
			return
		}
	}
}
