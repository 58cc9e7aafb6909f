package alloc_test

import (
	"context"
	"fmt"

	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/streams"
)

// An RGBA8 image in a CUDA array, filled channel by channel from a []uint8, and a 2×1 box
// of it read back.
func ExampleNewArray() {
	ctx := context.Background()
	dev, err := device.Open(ctx, 0, device.WithBackend(device.BackendSim))
	if err != nil {
		panic(err)
	}
	defer dev.Close()
	s := streams.Default(dev)

	img, err := alloc.NewArray(ctx, dev, cuda.Channels[uint8](4), alloc.Extent{W: 4, H: 2}, alloc.SurfaceLoadStore())
	if err != nil {
		panic(err)
	}
	defer img.Close(ctx)
	px := make([]uint8, 4*2*4)
	for i := range px {
		px[i] = uint8(i)
	}
	if err := alloc.CopyToArray(ctx, s, img, img.Whole(), px).Wait(ctx); err != nil {
		panic(err)
	}
	box := make([]uint8, 2*4)
	if err := alloc.CopyFromArray(ctx, s, box, img, alloc.Box{Pos: alloc.Pos{X: 1, Y: 1}, W: 2, H: 1}).Wait(ctx); err != nil {
		panic(err)
	}
	fmt.Println(img.Format(), img.Extent(), box)
	// Output:
	// unsigned8x4 {4 2 0} [20 21 22 23 24 25 26 27]
}

// The levels of a mipmapped array halve every extent.
func ExampleMipmappedArray_Level() {
	ctx := context.Background()
	dev, err := device.Open(ctx, 0, device.WithBackend(device.BackendSim))
	if err != nil {
		panic(err)
	}
	defer dev.Close()

	m, err := alloc.NewMipmappedArray(ctx, dev, cuda.Channels[float32](1), alloc.Extent{W: 8, H: 4}, 3)
	if err != nil {
		panic(err)
	}
	defer m.Close(ctx)
	for i := range m.Levels() {
		l, err := m.Level(ctx, i)
		if err != nil {
			panic(err)
		}
		fmt.Println(i, l.Extent())
	}
	// Output:
	// 0 {8 4 0}
	// 1 {4 2 0}
	// 2 {2 1 0}
}
