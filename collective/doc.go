// Package collective runs NCCL collectives (all-reduce, broadcast, reduce, all-gather,
// reduce-scatter, send and receive) on gpuactor devices: each device is one rank of a
// communicator, driven from its own actor thread, and each operation is a stream operation
// with a future, like a copy or a launch.
package collective
