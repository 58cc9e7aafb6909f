package alloc_test

import (
	"context"
	"fmt"

	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/streams"
)

// Allocate a typed buffer in stream order, fill it, read it back and free it in stream order.
// WithBackend(BackendSim) makes the example run the same everywhere.
func ExampleMallocAsync() {
	ctx := context.Background()
	dev, err := device.Open(ctx, 0, device.WithBackend(device.BackendSim))
	if err != nil {
		panic(err)
	}
	defer dev.Close()
	s, err := streams.New(ctx, dev)
	if err != nil {
		panic(err)
	}
	defer s.Close(ctx)

	buf, _, err := alloc.MallocAsync[float64](ctx, s, 4) // usable at once by work on s
	if err != nil {
		panic(err)
	}
	if err := streams.CopyToDevice(ctx, buf.Stream(), buf, []float64{1.5, 2.5, 3.5, 4.5}).Wait(ctx); err != nil {
		panic(err)
	}
	out := make([]float64, 4)
	if err := streams.CopyFromDevice(ctx, buf.Stream(), out, buf).Wait(ctx); err != nil {
		panic(err)
	}
	fmt.Println(out, buf.Len(), buf.ElemSize(), dev.Stats().Memory.Async.Bytes)
	if err := buf.Close(ctx); err != nil {
		panic(err)
	}
	fmt.Println(dev.Stats().Memory.Async.Count)
	// Output:
	// [1.5 2.5 3.5 4.5] 4 8 32
	// 0
}

// A pool of its own, which keeps freed memory for reuse.
func ExampleNewPool() {
	ctx := context.Background()
	dev, err := device.Open(ctx, 0, device.WithBackend(device.BackendSim))
	if err != nil {
		panic(err)
	}
	defer dev.Close()
	s, err := streams.New(ctx, dev)
	if err != nil {
		panic(err)
	}
	defer s.Close(ctx)

	pool, err := alloc.NewPool(ctx, dev, alloc.KeepUnused(alloc.KeepAll))
	if err != nil {
		panic(err)
	}
	defer pool.Close(ctx)
	a, _, err := alloc.MallocAsync[byte](ctx, s, 1<<20, alloc.FromPool(pool))
	if err != nil {
		panic(err)
	}
	first, err := a.DevicePtr(ctx)
	if err != nil {
		panic(err)
	}
	a.CloseOn(ctx, nil)
	b, _, err := alloc.MallocAsync[byte](ctx, s, 1<<20, alloc.FromPool(pool)) // same stream: reused
	if err != nil {
		panic(err)
	}
	attrs, err := pool.Attributes(ctx)
	if err != nil {
		panic(err)
	}
	second, err := b.DevicePtr(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Println(second == first, attrs.UsedCurrent >= 1<<20)
	_ = b.Close(ctx)
	// Output: true true
}

// Managed memory: written by the host, prefetched to the device, read back on the host.
func ExampleMallocManaged() {
	ctx := context.Background()
	dev, err := device.Open(ctx, 0, device.WithBackend(device.BackendSim))
	if err != nil {
		panic(err)
	}
	defer dev.Close()
	s, err := streams.New(ctx, dev)
	if err != nil {
		panic(err)
	}
	defer s.Close(ctx)

	m, err := alloc.MallocManaged[int32](ctx, dev, 3)
	if err != nil {
		panic(err)
	}
	copy(m.Host(), []int32{7, 8, 9})
	if err := m.Prefetch(ctx, s, alloc.OnDevice(dev)).Wait(ctx); err != nil {
		panic(err)
	}
	attrs, err := m.Attributes(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Println(m.Host(), attrs.LastPrefetchLocation)
	_ = m.Close(ctx)
	// Output: [7 8 9] device 0
}
