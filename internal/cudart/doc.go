// Package cudart binds the CUDA Runtime (libcudart) and NVRTC (libnvrtc) without cgo, through
// purego, and adapts them to the backend.Backend interface.
//
// # Loading
//
// Load finds and dlopens libcudart once per process (LoadNVRTC does the same for libnvrtc); see
// Load for the search order. Nothing is ever dlclosed. Symbols are resolved lazily on first use
// and cached in the Runtime; a function missing from the loaded library is reported as a
// *SymbolError, never a panic, so one binding serves runtimes 11.8 through 13.x. Where the C
// signature changed between versions, the call is chosen by the loaded library's major version
// (Runtime.Major).
//
// # Calls
//
// Every call passes hand-packed machine words through a small trampoline of our own entered via
// runtime.cgocall, like purego.SyscallN but about 50 ns cheaper a call (ffi_amd64.go; purego
// elsewhere); libraries are found and opened with purego. The cudaError_t result is truncated to int32 and turned into a *cudaerr.Error carrying the call's name, the code and
// the runtime's own cudaGetErrorString text, so errors.Is(err, cudaerr.MemoryAllocation) works.
//
// # Threads
//
// The CUDA "current device" belongs to the OS thread. Calls that act on the current device
// (Malloc, MemGetInfo, DeviceSynchronize, stream and event creation, module loading through the
// driver API…) must run on a thread where SetDevice and InitDevice were called, which is what
// the device actor's locked thread does through Backend.Open. Streams passed to the calls should
// be explicit streams: the package never uses the per-thread default stream.
//
// # Host functions
//
// LaunchHostFunc runs a Go function on a CUDA-owned thread once a stream reaches it. All host
// functions share one C trampoline created once per process (purego can create at most 2000
// callbacks and never frees them); the function is found again through a handle table keyed by
// the userData word. The function must not call CUDA and should return quickly.
package cudart
