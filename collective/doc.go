// Package collective runs NCCL collectives (all-reduce, broadcast, reduce, all-gather,
// reduce-scatter, send and receive) on gpuactor devices: each device is one rank of a
// communicator, driven from its own actor thread, and each operation is a stream operation
// with a future, like a copy or a launch.
//
// Make the ranks of one process with NewLocal (or ForGroup, for a fan-out group's devices),
// or one rank per process or host with NewID and Join. Operations take typed buffers
// (alloc.Buffer[T] of an Elem type) on a stream of the rank's device; every rank must issue
// the communicator's operations in the same order. Sends and receives that depend on each
// other, and collectives to be fused, go in a Group: each rank's part is issued on its own
// actor thread between ncclGroupStart and ncclGroupEnd.
//
// Communicators are blocking, as NCCL's are by default: operations are queued on the
// device's actor thread at NCCL's speed, and a call waiting on a peer that never comes is
// freed by Abort or its context's end, which abort the rank from another goroutine. A
// blocking Join parks the actor until every rank has joined; WithNonBlocking makes a
// communicator whose joining, splitting and finalizing are polled without parking the
// actor, at a cost of tens of microseconds an operation. A missing libnccl is ErrNoNCCL; NCCL's own failures
// are *Error values; an aborted communicator's operations fail with ErrAborted.
//
// The library is looked for as README.md in this directory says; the design is in
// docs/design/collectives.md.
package collective
