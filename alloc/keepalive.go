package alloc

import "runtime"

// keepAlive keeps s reachable until this point: the GPU reads or writes it until then.
func keepAlive[T any](s []T) { runtime.KeepAlive(s) }
