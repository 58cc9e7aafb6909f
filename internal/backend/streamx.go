package backend

// StreamAttr is a cudaStreamAttrID (a cudaLaunchAttributeID since 12.0; the stream attributes
// keep their 11.x values).
type StreamAttr int32

// The stream attributes gpuactor sets and reads.
const (
	StreamAttrAccessPolicyWindow StreamAttr = 1 // cudaStreamAttributeAccessPolicyWindow
	StreamAttrSyncPolicy         StreamAttr = 3 // cudaStreamAttributeSynchronizationPolicy
	StreamAttrPriority           StreamAttr = 8 // cudaStreamAttributePriority (12.0+)
)

// AccessProperty is a cudaAccessProperty: how the L2 cache treats accesses to a window.
type AccessProperty int32

// Access properties.
const (
	AccessNormal     AccessProperty = 0
	AccessStreaming  AccessProperty = 1
	AccessPersisting AccessProperty = 2
)

// SyncPolicy is a cudaSynchronizationPolicy: how a host thread waits for a stream.
type SyncPolicy int32

// Synchronization policies.
const (
	SyncAuto         SyncPolicy = 1
	SyncSpin         SyncPolicy = 2
	SyncYield        SyncPolicy = 3
	SyncBlockingSync SyncPolicy = 4
)

// AccessPolicyWindow is a cudaAccessPolicyWindow: of NumBytes bytes from Base, the fraction
// HitRatio of the cache lines gets HitProp and the rest MissProp.
type AccessPolicyWindow struct {
	Base     DevicePtr
	NumBytes uint64
	HitRatio float32
	HitProp  AccessProperty
	MissProp AccessProperty
}

// StreamAttrValue is one stream attribute's value: the field its StreamAttr names is the one
// that counts (a cudaStreamAttrValue union, held apart).
type StreamAttrValue struct {
	Window     AccessPolicyWindow
	SyncPolicy SyncPolicy
	Priority   int32
}

// Device attributes of the L2 persisting cache.
const (
	AttrMaxPersistingL2CacheSize  Attr = 108 // bytes
	AttrMaxAccessPolicyWindowSize Attr = 109 // bytes: the largest AccessPolicyWindow.NumBytes
)

// cudaEventRecordWithFlags flags.
const (
	EventRecordDefault  uint32 = 0
	EventRecordExternal uint32 = 1 // captured as an event record node instead of a fork/join point
)

// cudaStreamUpdateCaptureDependencies flags.
const (
	CaptureDepsAdd uint32 = 0 // add the nodes to the stream's capture dependencies
	CaptureDepsSet uint32 = 1 // replace them
)

// StreamControl is the rest of the stream and event management API, and profiler control:
// stream attributes and identity, capture dependencies, records with flags.
type StreamControl interface {
	// StreamGetAttribute reads attribute attr of s (cudaStreamGetAttribute).
	StreamGetAttribute(s Stream, attr StreamAttr) (StreamAttrValue, error)
	// StreamSetAttribute sets attribute attr of s to the matching field of v
	// (cudaStreamSetAttribute); it applies to work queued on s afterwards.
	StreamSetAttribute(s Stream, attr StreamAttr, v StreamAttrValue) error
	// StreamCopyAttributes copies src's attributes to dst (cudaStreamCopyAttributes).
	StreamCopyAttributes(dst, src Stream) error
	// StreamGetID is s's unique id in its context (cudaStreamGetId, 12.0+).
	StreamGetID(s Stream) (uint64, error)
	// ResetPersistingL2Cache demotes every persisting line of the L2 cache to normal
	// (cudaCtxResetPersistingL2Cache).
	ResetPersistingL2Cache() error
	// StreamUpdateCaptureDependencies adds deps to (CaptureDepsAdd) or makes them (CaptureDepsSet)
	// the nodes the next op captured on s depends on (cudaStreamUpdateCaptureDependencies).
	StreamUpdateCaptureDependencies(s Stream, deps []GraphNode, flags uint32) error
	// StreamIsCapturing is s's capture status alone (cudaStreamIsCapturing).
	StreamIsCapturing(s Stream) (CaptureStatus, error)
	// EventRecordWithFlags records e at the current end of s (cudaEventRecordWithFlags, flags:
	// EventRecord*).
	//remote:posted
	EventRecordWithFlags(e Event, s Stream, flags uint32) error
	// ProfilerStart enables profile collection by an attached profiler (cudaProfilerStart).
	ProfilerStart() error
	// ProfilerStop disables it again and flushes what was collected (cudaProfilerStop).
	ProfilerStop() error
}
