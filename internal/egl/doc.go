// Package egl is headless OpenGL through EGL, loaded with purego (no cgo), for gpuactor's
// graphics interoperability tests and example: it opens libEGL (glvnd's loader or a vendor's
// library), picks an EGL device (the one of a CUDA device, through EGL_CUDA_DEVICE_NV, where
// the driver says), makes a desktop OpenGL 4.x core context on it with a pbuffer surface (or
// none, surfaceless) and wraps the few GL calls the tests use, plus EGL images, fence syncs
// and streams.
//
// It is no general GL binding: every call is checked with glGetError and fails with an error
// naming it, which is what tests want. A context's calls must run on the thread it is current
// on.
//
// Where no libEGL loads or no EGL device works, Open fails with an *UnavailableError listing
// what was tried, which tests turn into a skip (or a failure where a GPU is required).
package egl
