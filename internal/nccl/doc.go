// Package nccl binds libnccl, NVIDIA's collective communications library, through purego:
// no cgo. It loads the library on first use (Load), once per process, and calls it from
// whichever thread the caller is on: the CUDA backend calls it from each device's actor
// thread, which has the device current, as NCCL expects of the thread that drives a rank.
//
// Only the calls gpuactor makes are bound: version, unique id, communicator init (with a
// config), split, async error, count/device/rank, finalize, destroy, abort, error strings,
// group start/end and the seven operations. Every call returns a *backend.CollError for an
// ncclResult_t other than ncclSuccess, and backend.ErrCollInProgress for ncclInProgress.
package nccl
