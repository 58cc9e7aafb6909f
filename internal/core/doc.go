// Package core is gpuactor's engine room: everything that runs on a device's actor thread and
// is shared by more than one public package. It holds the device's actor-side state (the
// runtime handle, the completion tracker, live buffers, host buffers and modules, accounting),
// the one operation type every stream-ordered call is (Msg, given its stream's handle: the
// device's own stream is just another stream), kernel launch preparation and argument packing,
// stream-ordered allocation, and the error sentinels every package wraps.
//
// The public packages are faces over it. device.Device, streams.Stream and the others are
// defined types over the structs here, so that each face shows only its own methods while a
// sibling package converts a face value to its core value for free; being internal, nothing
// here can be called from outside the module.
//
// Threading: what a type's comment calls "actor thread only" may be touched only from code the
// actor runs (an op given to Run, Submit and friends, a tracker callback, a cleanup). Everything
// else is safe from any goroutine.
package core
