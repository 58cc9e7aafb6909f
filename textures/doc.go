// Package textures makes texture and surface objects: what kernels sample through the GPU's
// texture units (tex1Dfetch, tex2D, tex3D, texCubemap...) and read and write CUDA arrays
// through (surf2Dread, surf2Dwrite...).
//
// A Texture reads a Resource: linear device memory (FromLinear, fetched with tex1Dfetch),
// pitched 2D memory (FromPitched), or a CUDA array. Its Desc says how it samples: address
// modes, point or linear filtering, element or normalized-float reads, normalized
// coordinates, sRGB, the border colour. Pass the *Texture (or its Object) to a kernel whose
// parameter is a cudaTextureObject_t; the launch checks that the texture, and the memory it
// reads, are still open.
//
// Lifetimes: a texture does not keep its memory alive. Closing a buffer a live texture reads
// is allowed (the GPU would then read freed memory), but every later launch given the
// *Texture is refused with an ErrClosed error naming the closed buffer; close textures before
// their memory. A texture made over memory already closed is refused at once.
//
// On the simulator, Go kernel twins sample with cuda.SimTex2D and its siblings, which model
// the hardware's addressing, filtering (linear weights with 8 fractional bits, as the CUDA
// programming guide's texture-fetching appendix gives them) and read-mode conversion.
//
// cudaCreateChannelDesc is cuda.Channels (or a cuda.ChannelFormat literal).
package textures
