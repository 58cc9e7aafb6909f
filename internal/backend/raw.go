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
	// DriverEntryPoint is the address, in this process, of the driver function symbol (a
	// base name) as CUDA version version defines it (0: the runtime's own), searched with
	// flags (DriverEntry*): cudaGetDriverEntryPointByVersion. A symbol the driver lacks is a
	// cudaerr.SymbolNotFound error.
	DriverEntryPoint(symbol string, version int, flags uint64) (uintptr, error)
}

// The search flags of DriverEntryPoint (cudaEnable*).
const (
	DriverEntryLegacyStream    uint64 = 1 // cudaEnableLegacyStream
	DriverEntryPerThreadStream uint64 = 2 // cudaEnablePerThreadDefaultStream
)
