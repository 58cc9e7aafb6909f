package backend

import (
	"errors"
	"fmt"
)

// Comm is an opaque ncclComm_t: one rank's membership of a communicator.
type Comm uintptr

// CommID is an ncclUniqueId: the opaque bytes one rank makes (CollUniqueID) and every rank
// of the communicator is given, by whatever transport the user has, before joining it.
type CommID [128]byte

// CollDataType is an ncclDataType_t: the element type of a collective's buffers.
type CollDataType int32

// Element types, with NCCL's values.
const (
	CollInt8       CollDataType = 0
	CollUint8      CollDataType = 1
	CollInt32      CollDataType = 2
	CollUint32     CollDataType = 3
	CollInt64      CollDataType = 4
	CollUint64     CollDataType = 5
	CollFloat16    CollDataType = 6
	CollFloat32    CollDataType = 7
	CollFloat64    CollDataType = 8
	CollBfloat16   CollDataType = 9
	CollFloat8E4M3 CollDataType = 10 // NCCL 2.24+ on sm_90+
	CollFloat8E5M2 CollDataType = 11 // NCCL 2.24+ on sm_90+
)

// CollRedOp is an ncclRedOp_t: how a reduction combines elements.
type CollRedOp int32

// Reductions, with NCCL's values.
const (
	CollSum  CollRedOp = 0
	CollProd CollRedOp = 1
	CollMax  CollRedOp = 2
	CollMin  CollRedOp = 3
	CollAvg  CollRedOp = 4 // NCCL 2.10+
)

// CollOpKind names the NCCL call a CollOp makes.
type CollOpKind int32

// The calls a CollOp makes.
const (
	CollAllReduce     CollOpKind = iota + 1 // ncclAllReduce(Send, Recv, Count, Type, Op)
	CollBroadcast                           // ncclBroadcast(Send, Recv, Count, Type, Peer = root)
	CollReduce                              // ncclReduce(Send, Recv, Count, Type, Op, Peer = root)
	CollAllGather                           // ncclAllGather(Send, Recv, Count = elements each rank sends, Type)
	CollReduceScatter                       // ncclReduceScatter(Send, Recv, Count = elements each rank receives, Type, Op)
	CollSend                                // ncclSend(Send, Count, Type, Peer)
	CollRecv                                // ncclRecv(Recv, Count, Type, Peer)
)

// CollOp is one NCCL call of a CollLaunch. Count is in elements of Type, with NCCL's meaning
// for each kind (see CollOpKind). Peer is the root of Broadcast and Reduce and the other rank
// of Send and Recv; other kinds ignore it. Send and Recv may be equal (in place) where NCCL
// allows it.
type CollOp struct {
	Kind       CollOpKind
	Send, Recv DevicePtr
	Count      uint64
	Type       CollDataType
	Op         CollRedOp
	Peer       int32
}

// CommConfig is the part of ncclConfig_t gpuactor sets when a rank joins or splits a
// communicator. A zero field keeps NCCL's default, except Blocking: false makes the
// communicator non-blocking (ncclConfig_t.blocking = 0), true blocking (1).
//
// A non-blocking communicator's calls never park the device's actor thread: NCCL finishes
// them on its own threads and the caller polls CollCommAsyncError; but NCCL then launches
// every operation from a thread it creates for it, which costs tens of microseconds each. A
// blocking communicator's operations are queued on the calling thread, at NCCL's own speed,
// and these calls may park the actor thread until the peers take part: CollCommInitRank
// (until every rank has joined, or NCCL's bootstrap gives up), CollCommSplit (until every
// rank of the parent has called it), CollCommFinalize (until the comm's operations have
// finished) and CollLaunch of the first operation between two ranks (which connects them).
// The way out of a parked call is CollCommAbortAnyThread from another goroutine.
type CommConfig struct {
	Blocking       bool   // blocking: NCCL's calls return only once done (see above)
	CGAClusterSize int32  // cgaClusterSize
	MinCTAs        int32  // minCTAs
	MaxCTAs        int32  // maxCTAs
	NetName        string // netName: the network plugin or transport to use, "" for NCCL's choice
	SplitShare     bool   // splitShare: a split communicator shares its parent's resources
}

// SplitNoColor is the color a rank passes to CollCommSplit to join no new communicator
// (NCCL_SPLIT_NOCOLOR).
const SplitNoColor = -1

// ErrCollInProgress is what CollCommAsyncError returns while a non-blocking operation of the
// communicator (joining, splitting, a grouped launch) is still under way.
var ErrCollInProgress = errors.New("nccl: operation in progress")

// CollError is an ncclResult_t other than ncclSuccess and ncclInProgress, from the NCCL call
// Call, with NCCL's last-error text in Detail when it gives one.
type CollError struct {
	Code   int32  // the ncclResult_t
	Call   string // e.g. "ncclAllReduce"
	Detail string // ncclGetLastError's text, or ""
}

// NCCL result codes a CollError carries.
const (
	CollUnhandledCudaError int32 = 1
	CollSystemError        int32 = 2
	CollInternalError      int32 = 3
	CollInvalidArgument    int32 = 4
	CollInvalidUsage       int32 = 5
	CollRemoteError        int32 = 6
)

func (e *CollError) Error() string {
	names := map[int32]string{
		CollUnhandledCudaError: "unhandled CUDA error",
		CollSystemError:        "system error",
		CollInternalError:      "internal error",
		CollInvalidArgument:    "invalid argument",
		CollInvalidUsage:       "invalid usage",
		CollRemoteError:        "remote error",
	}
	name, ok := names[e.Code]
	if !ok {
		name = fmt.Sprintf("result %d", e.Code)
	}
	if e.Detail != "" {
		return fmt.Sprintf("%s: %s: %s", e.Call, name, e.Detail)
	}
	return fmt.Sprintf("%s: %s", e.Call, name)
}

// CollectiveDevice is NCCL driven from one device's actor thread: a rank of a communicator
// per device, its collectives queued on the device's streams. Every method is called on the
// device's own thread, like the rest of Device. On a non-blocking communicator a method that
// starts something NCCL finishes in the background returns at once, and CollCommAsyncError
// reports ErrCollInProgress until it is done; on a blocking one (CommConfig.Blocking) it
// returns once done, and may park the thread meanwhile (see CommConfig).
//
// The CUDA backend loads libnccl on first use; where none loads, every method returns an
// error naming each path tried. The simulator implements the same calls functionally
// (results equal NCCL's; no speed), between simulated devices of one process and, through the
// address a CommID carries, of several processes.
type CollectiveDevice interface {
	// CollVersion is the NCCL library's version code (ncclGetVersion, e.g. 22803 for 2.28.3).
	CollVersion() (int, error)
	// CollUniqueID makes the id of a new communicator (ncclGetUniqueId).
	CollUniqueID() (CommID, error)
	// CollCommInitRank starts joining this device to id's communicator of nranks ranks as
	// rank (ncclCommInitRankConfig). Non-blocking, it returns the comm with a nil error
	// while joining goes on (a remote call carries no results beside an error); the comm is
	// usable once CollCommAsyncError returns nil. Blocking, it returns once every rank has
	// joined (a backend may still return early: callers poll CollCommAsyncError either way).
	CollCommInitRank(nranks int, id CommID, rank int, cfg CommConfig) (Comm, error)
	// CollCommSplit starts splitting c (ncclCommSplit): every rank of c calls
	// it; ranks of one color form a new communicator, ordered by key. A rank passing
	// SplitNoColor gets comm 0. A new comm comes with a nil error while the split goes on,
	// and is usable once CollCommAsyncError returns nil.
	CollCommSplit(c Comm, color, key int, cfg CommConfig) (Comm, error)
	// CollCommAsyncError is ncclCommGetAsyncError: nil when c has nothing in progress and
	// has not failed, ErrCollInProgress while it has, a *CollError when it failed.
	CollCommAsyncError(c Comm) error
	// CollCommInfo is c's rank count, this device's rank and its CUDA device
	// (ncclCommCount, ncclCommUserRank, ncclCommCuDevice).
	CollCommInfo(c Comm) (count, rank, device int, err error)
	// CollLaunch queues ops on s for c: one op as a plain call, several between
	// ncclGroupStart and ncclGroupEnd on this thread (send/recv pairs must be grouped).
	// It returns once NCCL has queued them or refused them (ErrCollInProgress means queued
	// while the comm is still finishing the group: poll CollCommAsyncError).
	CollLaunch(c Comm, s Stream, ops []CollOp) error
	// CollCommFinalize starts flushing c's outstanding operations (ncclCommFinalize,
	// non-blocking); CollCommDestroy follows once CollCommAsyncError returns nil.
	CollCommFinalize(c Comm) error
	// CollCommDestroy frees c (ncclCommDestroy).
	CollCommDestroy(c Comm) error
	// CollCommAbort stops everything c has in progress, kernels included, and frees c
	// (ncclCommAbort). It is the way out of a communicator whose peers are gone.
	CollCommAbort(c Comm) error
}
