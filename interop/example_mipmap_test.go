package interop_test

import (
	"context"

	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/interop"
	"github.com/gpuactor/gpuactor/textures"
)

// A Vulkan image (1024×1024 RGBA8, optimal tiling, all 11 mip levels) whose memory Vulkan
// exported as vkFD (vkGetMemoryFdKHR, the memory's allocation size in size), mapped as a
// mipmapped array and sampled by kernels through a trilinear texture. (Not run: the simulator
// imports no memory.)
func ExampleExternalMemory_MapMipmappedArray() {
	ctx := context.Background()
	var (
		dev  *device.Device // an open GPU
		vkFD int            // from vkGetMemoryFdKHR
		size uint64         // VkMemoryRequirements.size
	)
	mem, err := interop.ImportMemory(ctx, dev, vkFD, size, interop.Dedicated())
	if err != nil {
		panic(err)
	}
	defer mem.Close(ctx)
	image, err := mem.MapMipmappedArray(ctx, 0, cuda.Channels[uint8](4), alloc.Extent{W: 1024, H: 1024}, 11, alloc.ColorAttachment())
	if err != nil {
		panic(err)
	}
	defer image.Close(ctx)

	tex, err := textures.New(ctx, dev, textures.FromMipmapped(image), textures.Desc{
		Filter: textures.Linear, MipmapFilter: textures.Linear, Read: textures.NormalizedFloat,
		Normalized: true, MaxMipmapLevelClamp: 10,
	})
	if err != nil {
		panic(err)
	}
	defer tex.Close(ctx)
	// tex.Object() goes to kernels as their cudaTextureObject_t argument.
}
