package backend

// GraphMemAttr is a cudaGraphMemAttributeType: a figure of the memory a device keeps for the
// allocation nodes of its graphs.
type GraphMemAttr int32

// Graph memory attributes (values as in the runtime).
const (
	GraphMemUsedCurrent     GraphMemAttr = 0 // bytes allocated by graphs now
	GraphMemUsedHigh        GraphMemAttr = 1 // most UsedCurrent was since the last reset
	GraphMemReservedCurrent GraphMemAttr = 2 // bytes reserved for graph allocations now
	GraphMemReservedHigh    GraphMemAttr = 3 // most ReservedCurrent was since the last reset
)

// String names the attribute.
func (a GraphMemAttr) String() string {
	switch a {
	case GraphMemUsedCurrent:
		return "used memory"
	case GraphMemUsedHigh:
		return "used memory high watermark"
	case GraphMemReservedCurrent:
		return "reserved memory"
	case GraphMemReservedHigh:
		return "reserved memory high watermark"
	}
	return "unknown graph memory attribute"
}

// GraphMemDevice is the memory a device keeps for graph allocation nodes. Actor thread only.
type GraphMemDevice interface {
	// GraphMemTrim gives the memory reserved for graph allocations and not in use back to
	// the system (cudaDeviceGraphMemTrim).
	GraphMemTrim() error
	// GraphMemAttribute reads attr (cudaDeviceGetGraphMemAttribute).
	GraphMemAttribute(attr GraphMemAttr) (uint64, error)
	// SetGraphMemAttribute sets attr: only the high watermarks, and only to 0, which resets
	// them (cudaDeviceSetGraphMemAttribute).
	SetGraphMemAttribute(attr GraphMemAttr, value uint64) error
}
