// Package alloc is gpuactor's memory management beyond plain device buffers: stream-ordered
// allocation from memory pools (cudaMallocAsync / cudaFreeAsync), the pools themselves, typed
// device buffers, pinned and registered host memory, managed (unified) memory, pointer
// attributes and per-device accounting.
//
// Typed buffers. A Buffer[T] holds Len elements of T on one device — numbers, or arrays and
// structs of them (a T holding Go pointers is refused with ErrElemType) — and follows the order
// of one stream: MallocAsync queues
// the allocation on it and CloseOn (or Close) queues the free, so work queued on the stream in
// between may use the memory without any synchronization. Buffer[T] embeds the *device.Buffer
// it is made of, so it is a device.Mem: kernels, streams copies and memsets take it as they
// take any buffer. A buffer freed, even only queued for freeing, is refused by every later use
// with device.ErrClosed; a buffer used with another device's stream with device.ErrWrongDevice.
//
// No round trips. MallocAsync, CloseOn and Close return as soon as their message is queued
// to the device's actor, without waiting for it: a park and wake-up of the caller costs more
// than cudaMallocAsync itself. A stream-ordered buffer's address is known once the actor has
// run the allocation; every use of the buffer (a copy, a memset, a launch taking it, a slice
// of it, a free) is itself a message queued after it, and the actor runs messages in the
// order they were queued, so each use finds the address, or the failure. Buffer.DevicePtr, the
// one place a caller reads the address, waits for it until its context ends.
//
// Where errors surface. MallocAsync fails at once for what it can tell at once: bad
// arguments, a pool of another device or destroyed, the device's memory limit
// (device.ErrMemoryLimit), a closed or failed device, a context that ended before the
// allocation was queued; then nothing is allocated. What only the runtime can tell (out of
// memory, a pool at its maximum size) completes MallocAsync's future with the error, and
// every later use of the buffer fails with device.ErrAllocFailed wrapping it, freeing
// included; the buffer is then no longer counted. Close reports at once a second free
// (device.ErrClosed), a failed allocation, a closed or failed device; a runtime failure of the
// free itself comes only with CloseOn's future. device.Usage counts a stream-ordered
// allocation from MallocAsync's return until its free is queued, in the caller's order, so a
// loop that frees and allocates near the limit is never refused by frees the device has yet
// to run.
//
// Pools. MallocAsync allocates from the device's current pool (its default pool unless
// SetCurrentPool changed it) or from the pool given with FromPool. A pool keeps freed memory
// for reuse; its release threshold says how much unused memory it keeps across a
// synchronization (0 by default: all of it is returned to the device at the next synchronize).
// Reuse between streams follows the pool's reuse policy (ReuseFollowEventDependencies and
// friends): by default memory freed on one stream is reused on another that waited on an event
// recorded after the free.
//
// Host memory. MallocPinned allocates page-locked memory (cudaHostAlloc) and GetPinned takes
// it from the device's reusable PinnedPool (PinnedPoolOf). Register page-locks memory Go
// allocated: see Register for the lifetime rules.
//
// One vocabulary. Every memory type says the same thing with the same method: Size is its
// length in bytes, Len in elements (typed memory), Host its host view (host-visible memory
// only: Pinned, Registered, Managed), DevicePtr the address kernels use, and Slice(off, n) a
// sub-range of device memory (Buffer, Managed), which copies and kernels take.
//
// Managed memory. MallocManaged allocates memory the host and the device both address, which
// the driver migrates on demand; Prefetch, Advise, Attach and Attributes drive and observe
// the migration. A request larger than the device's free memory is refused with
// ErrOversubscribe: oversubscribed managed memory can stall a GPU for minutes.
//
// Accounting. device.Device.Stats (its Memory) reports, per device and per kind, the bytes and
// allocations gpuactor holds; device.WithMemoryLimit caps device memory (device, pool and
// managed allocations), refusing a request over it with device.ErrMemoryLimit. Usage counts
// the device's staging pool (pinned slots for copies of Go slices) under Pinned until the
// device is closed.
//
// A nil handle (*Buffer, *Pinned, *Managed, *Registered, *Pool, *PinnedPool) or a nil stream
// argument is refused with an error wrapping device.ErrInvalidArgument that names it (a future
// completes with it at once); accessors of a nil handle return zero values (Closed reports
// true), and nothing panics.
package alloc
