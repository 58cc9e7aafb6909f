package streams

// Handle is the stream's raw cudaStream_t, for handing to another library that queues work
// of its own on it (cublasSetStream, say): that work runs in order with gpuactor's on the
// stream. The handle is valid until the stream's Close (or its device's Close) returns; a
// library must not use it after that, nor destroy it (gpuactor does, in Close; a stream from
// interop.WrapStream is the other library's to destroy, after its Close).
//
// gpuactor's futures track only the operations gpuactor queued: nothing completes when the
// other library's work does. To wait for that work, queue a gpuactor operation after it and
// wait for that: Synchronize, or Record an event and wait for its future; both cover
// everything queued on the stream before them, whoever queued it.
//
// Handle is 0 for a nil stream. It does not check that the stream is still open.
func (s *Stream) Handle() uintptr {
	if s == nil {
		return 0
	}
	return uintptr(s.core().RawHandle())
}

// Handle is the event's raw cudaEvent_t, for another library to record or wait on (a library
// that takes events to order its work, say). It is valid until the event's Close (or its
// device's Close) returns, and the library must not destroy it. A record another library makes
// is not tracked by gpuactor: Query and Synchronize see it (they ask the runtime), but the
// futures of gpuactor's own Record do not. Handle is 0 for a nil event.
func (e *Event) Handle() uintptr {
	if e == nil {
		return 0
	}
	return uintptr(e.core().RawHandle())
}
