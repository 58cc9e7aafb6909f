// Package remote is a backend.Backend whose device lives in a worker process: the seam under
// an isolated device. The device actor, its tracker and every public package stay in the
// parent and drive a *Device as they drive any backend.Device; each Device method is one
// worker.Call that the worker serves on a real backend (the CUDA runtime, or the simulator).
//
// The parent calls New with a function that starts the worker (Start, which sets the error
// codec both sides need); the worker's main calls worker.Main(remote.Serve(backend)) first
// thing. The worker serves one device, opened on the one OS thread that serves every call,
// in the order the calls were made.
//
// # Wire format
//
// A request is the method's number, then its arguments, each scalar as 8 little-endian bytes
// and each byte string or list as a count and then its contents; an answer is the results in
// the same form. No reflection at run time, and no hand-numbered ids: go generate
// (internal/gen) reads backend.Device with go/types and writes the method ids
// (methods_gen.go), the parent's stubs (client_gen.go) and the worker's dispatch table with
// its handlers (serve_gen.go), so a method added to backend.Device crosses with no edit here.
// The few methods the contract alone cannot carry are written by hand: the parent's side as
// *Device methods (device.go: the event board; hostmem.go: shared host memory; refuse.go),
// the worker's as serveX methods (serve_hooks.go), which the generator finds by name. A
// //remote:posted, //remote:inline or //remote:startable line in a backend method's doc
// comment marks a posted method, one whose results cross with its error, or one whose call is
// also generated as two halves, started and answered (startalloc.go). Handles (streams, events, modules,
// kernels, graphs, pools) and device pointers are the worker's, cross as numbers and are never
// dereferenced in the parent. Errors cross through Codec: one holding a cudaerr code comes
// back as a *cudaerr.Error with the same code, operation and message, so errors.Is(err,
// cudaerr.X) holds as it does in process.
//
// # Posted operations
//
// Stream operations (launches, copies, memsets, event records, waits, graph launches,
// stream-ordered frees) are posted: sent without waiting for an answer, as a launch in process
// returns once queued. An error of one comes back on the next call that asks after its
// stream's work (posted.go says which), which is where the device's completion tracking
// learns of it; a sticky one is answered to the next call of any kind.
//
// CollLaunch, though it queues work on a stream, is a plain call: NCCL refuses a launch at
// once (bad arguments, a communicator still joining or failed) and the caller must learn of
// it then, not at the stream's next query; its first argument is the communicator, not the
// stream. NCCL's errors cross as themselves (codec_collective.go): a *backend.CollError stays
// one, and ErrCollInProgress matches with errors.Is.
//
// # Host memory
//
// HostAlloc's memory is a memfd both processes map; the worker registers its mapping with its
// backend (cudaHostRegister), so it is pinned there. Copies to and from it (CopyHtoD,
// CopyDtoH, the graph copy nodes, HostDevicePointer, PointerAttributes) name the worker's
// address of the same bytes, translated through a table of the shared regions on each side;
// the data itself never goes through a call. Any other host pointer is refused with
// cudaerr.NotSupported: isolated devices copy only through gpuactor's host buffers.
//
// # What is refused
//
// Methods that need what one process cannot hand another fail with cudaerr.NotSupported
// ("not supported on an isolated device: <method>") and touch nothing: HostRegister and
// HostUnregister (memory the parent already has), ManagedHost, LaunchHostFunc,
// GraphAddHostNode and UserObjectCreate (parent closures), and the file-descriptor methods
// ImportExternalMemoryFD, ImportExternalSemaphoreFD, MemPoolExportFD and MemPoolImportFD.
//
// # Simulator kernels
//
// A module's simulator kernels are Go functions of the parent, which the worker cannot run.
// They cross by name: the worker runs the functions it was given under those names
// (WithKernels), and refuses a module that names one it lacks. Both processes are the same
// program, so it registers the same functions in both.
//
// # Death
//
// When the worker dies (or is closed), every pending and later call fails with a *LostError,
// which matches worker.ErrWorkerDied (or worker.ErrClosed) and cudaerr.DevicesUnavailable,
// and the backend's Health for the device fails with it, without waiting for a call.
package remote

//go:generate go run ./internal/gen
