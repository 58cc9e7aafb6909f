package backend

// Host NUMA locations (cudaMemLocationType, CUDA 13.0): where managed memory should live or
// be prefetched to on a machine of several host NUMA nodes.
const (
	LocationHostNUMA        LocationType = 3 // ID is a host NUMA node
	LocationHostNUMACurrent LocationType = 4 // the node of the calling thread's CPU; ID is ignored
)

// Range attributes naming a location as a type and an id (CUDA 12.2 on): they tell host NUMA
// nodes apart, which the int forms (RangePreferredLocation, RangeLastPrefetchLocation)
// cannot.
const (
	RangePreferredLocationType    RangeAttr = 5
	RangePreferredLocationID      RangeAttr = 6
	RangeLastPrefetchLocationType RangeAttr = 7
	RangeLastPrefetchLocationID   RangeAttr = 8
)

// RangeInfo is what the runtime says of a range of managed memory: each attribute holds for
// every page of the range, or is unset (a zero Location, ReadMostly false).
type RangeInfo struct {
	ReadMostly   bool
	Preferred    Location // Type LocationInvalid: none, or not the same for every page
	LastPrefetch Location // Type LocationInvalid: never prefetched as a whole
	// AccessedBy is the devices (ordinals) advised with AdviseSetAccessedBy for the whole
	// range, CPUDevice for the host; at most as many as MemRangeInfo was asked for.
	AccessedBy []int32
}

// MemRangeDevice reads every range attribute of managed memory at once.
type MemRangeDevice interface {
	// MemRangeInfo reads the attributes of n bytes of managed memory at p in one call
	// (cudaMemRangeGetAttributes), listing at most maxAccessedBy devices (1 to 1024).
	MemRangeInfo(p DevicePtr, n uint64, maxAccessedBy int) (RangeInfo, error)
}
