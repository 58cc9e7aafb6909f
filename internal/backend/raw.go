package backend

// RawDevice answers questions about stream handles gpuactor did not make, so that a stream
// another library created can be checked before gpuactor queues work on it.
type RawDevice interface {
	// StreamGetDevice is the ordinal of the device s belongs to (cudaStreamGetDevice), or -1
	// where the runtime cannot tell (before 12.8, which lacks the call).
	StreamGetDevice(s Stream) (int, error)
	// StreamGetFlags is s's creation flags (StreamDefault or StreamNonBlocking).
	StreamGetFlags(s Stream) (uint32, error)
	// StreamGetPriority is s's priority.
	StreamGetPriority(s Stream) (int, error)
}
