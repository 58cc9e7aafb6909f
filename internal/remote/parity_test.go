//go:build linux

package remote_test

import (
	"errors"
	"path/filepath"
	"reflect"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// pstate is what one device's steps made, for the steps after them: each side has its own.
type pstate struct {
	p, q, managed, allocP backend.DevicePtr
	s                     backend.Stream
	e, e2                 backend.Event
	mod                   backend.Module
	k                     backend.Kernel
	pool0, pool           backend.MemPool
	captured, g, clone    backend.Graph
	empty, set, kn, alloc backend.GraphNode
	x                     backend.GraphExec
	hp                    unsafe.Pointer
	dot                   string
}

// paritySteps are the calls TestSameAnswersAsInProcess makes on both devices, in order; each
// names the backend.Device methods it covers, and TestEveryMethodHasAParityStep checks that
// together they cover them all. A step's value is compared as it is, so a step returns only
// what must agree: a value of one process (a host address, a time) is returned as a fact
// about it.
var paritySteps = []struct {
	name   string
	covers []string
	run    func(dv backend.Device, st *pstate) (any, error)
}{
	{"Name", []string{"Name"}, func(dv backend.Device, st *pstate) (any, error) { return dv.Name() }},
	{"Ordinal", []string{"Ordinal"}, func(dv backend.Device, st *pstate) (any, error) { return dv.Ordinal(), nil }},
	{"Attribute", []string{"Attribute"}, func(dv backend.Device, st *pstate) (any, error) {
		return dv.Attribute(backend.AttrMultiProcessorCount)
	}},
	{"BadAttribute", nil, func(dv backend.Device, st *pstate) (any, error) { return dv.Attribute(-1) }},
	{"PeekLastError", []string{"PeekLastError"}, func(dv backend.Device, st *pstate) (any, error) {
		return errText(dv.PeekLastError()), dv.PeekLastError()
	}},
	{"PCIBusID", []string{"PCIBusID"}, func(dv backend.Device, st *pstate) (any, error) { return dv.PCIBusID() }},
	{"MemInfo", []string{"MemInfo"}, func(dv backend.Device, st *pstate) (any, error) {
		f, t, err := dv.MemInfo()
		return [2]uint64{f, t}, err
	}},
	{"StreamPriorityRange", []string{"StreamPriorityRange"}, func(dv backend.Device, st *pstate) (any, error) {
		l, g, err := dv.StreamPriorityRange()
		return [2]int{l, g}, err
	}},
	{"DeviceManagement", []string{"UUID", "Limit", "SetLimit", "CacheConfig", "SetCacheConfig", "SharedMemConfig", "SetSharedMemConfig", "DeviceFlags", "FlushGPUDirectRDMAWrites"}, func(dv backend.Device, st *pstate) (any, error) {
		u, err := dv.UUID()
		if err != nil {
			return nil, err
		}
		if err := dv.SetLimit(backend.LimitStackSize, 4096); err != nil {
			return nil, err
		}
		stack, err := dv.Limit(backend.LimitStackSize)
		if err != nil {
			return nil, err
		}
		if err := dv.SetCacheConfig(1); err != nil {
			return nil, err
		}
		cache, err := dv.CacheConfig()
		if err != nil {
			return nil, err
		}
		if err := dv.SetSharedMemConfig(2); err != nil {
			return nil, err
		}
		bank, err := dv.SharedMemConfig()
		if err != nil {
			return nil, err
		}
		flags, err := dv.DeviceFlags()
		if err != nil {
			return nil, err
		}
		_, badLimit := dv.Limit(99)
		return []any{u, stack, cache, bank, flags, errText(badLimit), errText(dv.FlushGPUDirectRDMAWrites(7))}, dv.FlushGPUDirectRDMAWrites(backend.FlushToOwner)
	}},
	{"Malloc", []string{"Malloc"}, func(dv backend.Device, st *pstate) (v any, err error) {
		if st.p, err = dv.Malloc(1 << 16); err != nil {
			return st.p, err
		}
		st.q, err = dv.Malloc(1 << 16)
		return [2]backend.DevicePtr{st.p, st.q}, err
	}},
	{"MallocTooMuch", nil, func(dv backend.Device, st *pstate) (any, error) { return dv.Malloc(1 << 40) }},
	{"StreamCreate", []string{"StreamCreate"}, func(dv backend.Device, st *pstate) (v any, err error) {
		st.s, err = dv.StreamCreate(backend.StreamNonBlocking, -1)
		return st.s, err
	}},
	{"StreamGetDevice", []string{"StreamGetDevice"}, func(dv backend.Device, st *pstate) (any, error) { return dv.StreamGetDevice(st.s) }},
	{"StreamGetFlags", []string{"StreamGetFlags"}, func(dv backend.Device, st *pstate) (any, error) { return dv.StreamGetFlags(st.s) }},
	{"StreamGetPriority", []string{"StreamGetPriority"}, func(dv backend.Device, st *pstate) (any, error) { return dv.StreamGetPriority(st.s) }},
	{"BadStreamQuery", nil, func(dv backend.Device, st *pstate) (any, error) { return nil, dv.StreamQuery(0xdead) }},
	{"MemsetCopyDtoD", []string{"Memset", "CopyDtoD", "StreamSynchronize", "StreamQuery"}, func(dv backend.Device, st *pstate) (any, error) {
		if err := dv.Memset(st.p, 7, 4096, st.s); err != nil {
			return nil, err
		}
		if err := dv.CopyDtoD(st.q, st.p, 4096, st.s); err != nil {
			return nil, err
		}
		if err := dv.StreamSynchronize(st.s); err != nil {
			return nil, err
		}
		return nil, dv.StreamQuery(st.s)
	}},
	{"MemsetOutOfRange", nil, func(dv backend.Device, st *pstate) (any, error) {
		if err := dv.Memset(st.p, 7, 1<<20, st.s); err != nil {
			return nil, err
		}
		return nil, dv.StreamSynchronize(st.s)
	}},
	{"EventCreateBadFlags", nil, func(dv backend.Device, st *pstate) (any, error) { return dv.EventCreate(1 << 20) }},
	{"Events", []string{"EventCreate", "EventRecord", "EventSynchronize", "EventQuery", "EventElapsed", "StreamWaitEvent"}, func(dv backend.Device, st *pstate) (v any, err error) {
		if st.e, err = dv.EventCreate(backend.EventDefault); err != nil {
			return nil, err
		}
		if st.e2, err = dv.EventCreate(backend.EventDefault); err != nil {
			return nil, err
		}
		if err := dv.EventRecord(st.e, st.s); err != nil {
			return nil, err
		}
		if err := dv.StreamWaitEvent(st.s, st.e); err != nil {
			return nil, err
		}
		if err := dv.EventRecord(st.e2, st.s); err != nil {
			return nil, err
		}
		if err := dv.EventSynchronize(st.e2); err != nil {
			return nil, err
		}
		if err := dv.EventQuery(st.e); err != nil {
			return nil, err
		}
		ms, err := dv.EventElapsed(st.e, st.e2) // a time of each process: only its sign agrees
		return []any{st.e, st.e2, ms >= 0}, err
	}},
	{"LoadModule", []string{"LoadModule", "ModuleKernel", "Launch"}, func(dv backend.Device, st *pstate) (v any, err error) {
		if st.mod, err = dv.LoadModule(backend.ModuleSpec{SimKernels: map[string]backend.SimKernel{"fill": testKernels["fill"]}}); err != nil {
			return nil, err
		}
		if st.k, err = dv.ModuleKernel(st.mod, "fill"); err != nil {
			return nil, err
		}
		args := []backend.Arg{{Kind: backend.ArgPtr, Bits: uint64(st.p)}, {Kind: backend.ArgInt32, Bits: 64}, {Kind: backend.ArgInt32, Bits: 9}}
		if err := dv.Launch(st.k, backend.Dim3{X: 1, Y: 1, Z: 1}, backend.Dim3{X: 64, Y: 1, Z: 1}, 0, st.s, args); err != nil {
			return nil, err
		}
		return []any{st.mod, st.k}, dv.StreamSynchronize(st.s)
	}},
	// The worker's module has no variables: a lookup fails alike, naming the variable.
	{"ModuleGlobal", []string{"ModuleGlobal"}, func(dv backend.Device, st *pstate) (any, error) {
		p, n, err := dv.ModuleGlobal(st.mod, "table")
		return []any{p, n}, err
	}},
	{"Occupancy", []string{"OccupancyMaxActiveBlocksPerSM"}, func(dv backend.Device, st *pstate) (any, error) {
		var out []any
		for _, c := range []struct {
			block  int
			shared uint64
		}{{256, 0}, {32, 0}, {128, 100 << 10}, {4096, 0}, {0, 0}} {
			n, err := dv.OccupancyMaxActiveBlocksPerSM(st.k, c.block, c.shared, backend.OccupancyDefault)
			out = append(out, n, errText(err))
		}
		return out, nil
	}},
	{"OccupancyOfNothing", nil, func(dv backend.Device, st *pstate) (any, error) {
		return dv.OccupancyMaxActiveBlocksPerSM(0x99, 128, 0, 0)
	}},
	{"FuncAttributes", []string{"FuncAttributes", "FuncSetAttribute", "FuncSetCacheConfig", "FuncName", "FuncParamSizes"}, func(dv backend.Device, st *pstate) (any, error) {
		var out []any
		out = append(out, errText(dv.FuncSetAttribute(st.k, backend.FuncAttrMaxDynamicSharedMemorySize, 100<<10)))
		out = append(out, errText(dv.FuncSetAttribute(st.k, backend.FuncAttrPreferredSharedMemoryCarveout, 101)))
		out = append(out, errText(dv.FuncSetCacheConfig(st.k, 2)), errText(dv.FuncSetCacheConfig(st.k, 9)))
		a, err := dv.FuncAttributes(st.k)
		out = append(out, a, errText(err))
		name, err := dv.FuncName(st.k)
		out = append(out, name, errText(err))
		sizes, err := dv.FuncParamSizes(st.k)
		out = append(out, sizes, errText(err))
		_, err = dv.FuncAttributes(0x99)
		return append(out, errText(err)), nil
	}},
	{"LaunchEx", []string{"LaunchEx", "OccupancyAvailableDynamicSMemPerBlock", "OccupancyMaxPotentialClusterSize", "OccupancyMaxActiveClusters"}, func(dv backend.Device, st *pstate) (any, error) {
		one, block := backend.Dim3{X: 1, Y: 1, Z: 1}, backend.Dim3{X: 64, Y: 1, Z: 1}
		args := []backend.Arg{{Kind: backend.ArgPtr, Bits: uint64(st.p)}, {Kind: backend.ArgInt32, Bits: 64}, {Kind: backend.ArgInt32, Bits: 3}}
		if err := dv.LaunchEx(st.k, one, block, 0, st.s, args, backend.LaunchAttrs{Cooperative: true, Priority: -1}); err != nil {
			return nil, err
		}
		if err := dv.StreamSynchronize(st.s); err != nil {
			return nil, err
		}
		var out []any
		avail, err := dv.OccupancyAvailableDynamicSMemPerBlock(st.k, 4, 256)
		out = append(out, avail, errText(err))
		size, err := dv.OccupancyMaxPotentialClusterSize(st.k, backend.Dim3{X: 16, Y: 1, Z: 1}, block, 0, backend.LaunchAttrs{})
		out = append(out, size, errText(err))
		n, err := dv.OccupancyMaxActiveClusters(st.k, backend.Dim3{X: 16, Y: 1, Z: 1}, block, 0, backend.LaunchAttrs{Cluster: backend.Dim3{X: 2, Y: 1, Z: 1}})
		out = append(out, n, errText(err))
		_, err = dv.OccupancyMaxActiveClusters(st.k, backend.Dim3{X: 3, Y: 1, Z: 1}, block, 0, backend.LaunchAttrs{Cluster: backend.Dim3{X: 2, Y: 1, Z: 1}})
		return append(out, errText(err)), nil
	}},
	// An extended launch is posted too: a refused cluster comes back on the stream's next query.
	{"LaunchExBadCluster", nil, func(dv backend.Device, st *pstate) (any, error) {
		err := dv.LaunchEx(st.k, backend.Dim3{X: 3, Y: 1, Z: 1}, backend.Dim3{X: 1, Y: 1, Z: 1}, 0, st.s, nil, backend.LaunchAttrs{Cluster: backend.Dim3{X: 2, Y: 1, Z: 1}})
		if err != nil {
			return nil, err
		}
		return nil, dv.StreamQuery(st.s)
	}},
	{"LoadGarbagePTX", nil, func(dv backend.Device, st *pstate) (any, error) {
		return dv.LoadModule(backend.ModuleSpec{Image: []byte("not ptx"), ImageKind: backend.ImagePTX})
	}},
	{"ModuleKernelOfNothing", nil, func(dv backend.Device, st *pstate) (any, error) { return dv.ModuleKernel(0x77, "saxpy") }},
	// A launch is posted: its error comes back on the stream's next query (posted.go).
	{"LaunchUnknownKernel", nil, func(dv backend.Device, st *pstate) (any, error) {
		err := dv.Launch(0x99, backend.Dim3{X: 1, Y: 1, Z: 1}, backend.Dim3{X: 1, Y: 1, Z: 1}, 0, 0, []backend.Arg{{Kind: backend.ArgInt32, Bits: 1}})
		if err != nil {
			return nil, err
		}
		return nil, dv.StreamQuery(0)
	}},
	{"Pools", []string{"DefaultMemPool", "CurrentMemPool", "MallocAsync", "FreeAsync", "MemPoolCreate", "MallocFromPoolAsync", "SetCurrentMemPool", "MemPoolSetAttribute", "MemPoolGetAttribute", "MemPoolTrimTo", "MemPoolSetAccess", "MemPoolGetAccess"}, func(dv backend.Device, st *pstate) (v any, err error) {
		if st.pool0, err = dv.DefaultMemPool(); err != nil {
			return nil, err
		}
		cur, err := dv.CurrentMemPool()
		if err != nil {
			return nil, err
		}
		a, err := dv.MallocAsync(1024, st.s)
		if err != nil {
			return nil, err
		}
		if err := dv.FreeAsync(a, st.s); err != nil {
			return nil, err
		}
		if st.pool, err = dv.MemPoolCreate(backend.PoolProps{Location: backend.Location{Type: backend.LocationDevice}}); err != nil {
			return nil, err
		}
		b, err := dv.MallocFromPoolAsync(512, st.pool, st.s)
		if err != nil {
			return nil, err
		}
		if err := dv.FreeAsync(b, st.s); err != nil {
			return nil, err
		}
		if err := dv.SetCurrentMemPool(st.pool); err != nil {
			return nil, err
		}
		if err := dv.SetCurrentMemPool(st.pool0); err != nil {
			return nil, err
		}
		if err := dv.MemPoolSetAttribute(st.pool, backend.PoolReleaseThreshold, 1<<20); err != nil {
			return nil, err
		}
		th, err := dv.MemPoolGetAttribute(st.pool, backend.PoolReleaseThreshold)
		if err != nil {
			return nil, err
		}
		if err := dv.MemPoolTrimTo(st.pool, 0); err != nil {
			return nil, err
		}
		if err := dv.MemPoolSetAccess(st.pool, 0, backend.AccessReadWrite); err != nil {
			return nil, err
		}
		acc, err := dv.MemPoolGetAccess(st.pool, 0)
		return []any{st.pool0, cur, a, st.pool, b, th, acc}, err
	}},
	{"BadPoolAttribute", nil, func(dv backend.Device, st *pstate) (any, error) { return dv.MemPoolGetAttribute(st.pool, 99) }},
	{"Managed", []string{"MallocManaged", "MemPrefetch", "MemAdvise", "MemRangeAttribute", "StreamAttachMem"}, func(dv backend.Device, st *pstate) (v any, err error) {
		if st.managed, err = dv.MallocManaged(4096, backend.AttachGlobal); err != nil {
			return nil, err
		}
		dev := backend.Location{Type: backend.LocationDevice}
		if err := dv.MemPrefetch(st.managed, 4096, dev, st.s); err != nil {
			return nil, err
		}
		if err := dv.MemAdvise(st.managed, 4096, backend.AdviseSetReadMostly, dev); err != nil {
			return nil, err
		}
		out := make([]int32, 1)
		if err := dv.MemRangeAttribute(st.managed, 4096, backend.RangeReadMostly, out); err != nil {
			return nil, err
		}
		return []any{st.managed, out}, dv.StreamAttachMem(st.s, st.managed, 0, backend.AttachSingle)
	}},
	{"RangeAttributeOfNothing", nil, func(dv backend.Device, st *pstate) (any, error) {
		out := make([]int32, 2)
		err := dv.MemRangeAttribute(0x5, 16, backend.RangeReadMostly, out)
		return out, err
	}},
	{"Capture", []string{"StreamBeginCapture", "StreamCaptureInfo", "StreamEndCapture"}, func(dv backend.Device, st *pstate) (v any, err error) {
		if err := dv.StreamBeginCapture(st.s, backend.CaptureGlobal); err != nil {
			return nil, err
		}
		if err := dv.Memset(st.p, 1, 64, st.s); err != nil {
			return nil, err
		}
		info, err := dv.StreamCaptureInfo(st.s)
		if err != nil {
			return nil, err
		}
		st.captured, err = dv.StreamEndCapture(st.s)
		return []any{info, st.captured}, err
	}},
	{"CaptureInfoOfNone", nil, func(dv backend.Device, st *pstate) (any, error) { return dv.StreamCaptureInfo(0) }},
	{"StreamAttributes", []string{"StreamSetAttribute", "StreamGetAttribute", "StreamCopyAttributes"}, func(dv backend.Device, st *pstate) (any, error) {
		w := backend.AccessPolicyWindow{Base: st.p, NumBytes: 4096, HitRatio: 0.5, HitProp: backend.AccessPersisting, MissProp: backend.AccessStreaming}
		sets := map[backend.StreamAttr]backend.StreamAttrValue{
			backend.StreamAttrAccessPolicyWindow: {Window: w},
			backend.StreamAttrSyncPolicy:         {SyncPolicy: backend.SyncYield},
			backend.StreamAttrPriority:           {Priority: -2},
		}
		for a, v := range sets {
			if err := dv.StreamSetAttribute(st.s, a, v); err != nil {
				return nil, err
			}
		}
		other, err := dv.StreamCreate(backend.StreamNonBlocking, 0)
		if err != nil {
			return nil, err
		}
		defer dv.StreamDestroy(other)
		if err := dv.StreamCopyAttributes(other, st.s); err != nil {
			return nil, err
		}
		var out []backend.StreamAttrValue
		for _, a := range []backend.StreamAttr{backend.StreamAttrAccessPolicyWindow, backend.StreamAttrSyncPolicy, backend.StreamAttrPriority} {
			v, err := dv.StreamGetAttribute(other, a)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	}},
	{"BadStreamAttributes", nil, func(dv backend.Device, st *pstate) (any, error) {
		big := dv.StreamSetAttribute(st.s, backend.StreamAttrAccessPolicyWindow, backend.StreamAttrValue{Window: backend.AccessPolicyWindow{Base: st.p, NumBytes: 1 << 40}})
		ratio := dv.StreamSetAttribute(st.s, backend.StreamAttrAccessPolicyWindow, backend.StreamAttrValue{Window: backend.AccessPolicyWindow{Base: st.p, NumBytes: 64, HitRatio: 2}})
		_, unknown := dv.StreamGetAttribute(st.s, 99)
		return []string{errText(big), errText(ratio), errText(unknown)}, nil
	}},
	{"StreamGetID", []string{"StreamGetID"}, func(dv backend.Device, st *pstate) (any, error) { return dv.StreamGetID(st.s) }},
	{"ResetPersistingL2Cache", []string{"ResetPersistingL2Cache"}, func(dv backend.Device, st *pstate) (any, error) {
		return nil, dv.ResetPersistingL2Cache()
	}},
	{"Profiler", []string{"ProfilerStart", "ProfilerStop"}, func(dv backend.Device, st *pstate) (any, error) {
		if err := dv.ProfilerStart(); err != nil {
			return nil, err
		}
		return nil, dv.ProfilerStop()
	}},
	{"CaptureDependencies", []string{"StreamUpdateCaptureDependencies", "EventRecordWithFlags", "StreamIsCapturing"}, func(dv backend.Device, st *pstate) (any, error) {
		before, err := dv.StreamIsCapturing(st.s)
		if err != nil {
			return nil, err
		}
		if err := dv.StreamBeginCapture(st.s, backend.CaptureGlobal); err != nil {
			return nil, err
		}
		during, err := dv.StreamIsCapturing(st.s)
		if err != nil {
			return nil, err
		}
		if err := dv.Memset(st.p, 1, 64, st.s); err != nil {
			return nil, err
		}
		first, err := dv.StreamCaptureInfo(st.s)
		if err != nil {
			return nil, err
		}
		if err := dv.Memset(st.p, 2, 64, st.s); err != nil {
			return nil, err
		}
		if err := dv.StreamUpdateCaptureDependencies(st.s, first.Deps, backend.CaptureDepsSet); err != nil {
			return nil, err
		}
		if err := dv.EventRecordWithFlags(st.e, st.s, backend.EventRecordExternal); err != nil {
			return nil, err
		}
		bad := dv.StreamUpdateCaptureDependencies(st.s, []backend.GraphNode{0xdead}, backend.CaptureDepsAdd)
		g, err := dv.StreamEndCapture(st.s)
		if err != nil {
			return nil, err
		}
		defer dv.GraphDestroy(g)
		nodes, err := dv.GraphNodes(g)
		if err != nil {
			return nil, err
		}
		roots, err := dv.GraphRootNodes(g)
		if err != nil {
			return nil, err
		}
		if err := dv.EventRecordWithFlags(st.e, st.s, backend.EventRecordDefault); err != nil {
			return nil, err
		}
		return []any{before, during, len(nodes), len(roots), errText(bad)}, dv.EventSynchronize(st.e)
	}},
	{"BuildGraph", []string{"GraphCreate", "GraphAddEmptyNode", "GraphAddMemsetNode", "GraphAddCopyDtoD", "GraphAddKernelNode", "GraphAddChildNode", "GraphAddEventRecordNode", "GraphAddEventWaitNode", "GraphAddMemAllocNode", "GraphAddMemFreeNode", "GraphAddDependencies"}, func(dv backend.Device, st *pstate) (v any, err error) {
		if st.g, err = dv.GraphCreate(); err != nil {
			return nil, err
		}
		if st.empty, err = dv.GraphAddEmptyNode(st.g, nil); err != nil {
			return nil, err
		}
		after := []backend.GraphNode{st.empty}
		if st.set, err = dv.GraphAddMemsetNode(st.g, after, st.p, 3, 64); err != nil {
			return nil, err
		}
		cp, err := dv.GraphAddCopyDtoD(st.g, []backend.GraphNode{st.set}, st.q, st.p, 64)
		if err != nil {
			return nil, err
		}
		kp := backend.KernelNode{Kernel: st.k, Grid: backend.Dim3{X: 1, Y: 1, Z: 1}, Block: backend.Dim3{X: 16, Y: 1, Z: 1},
			Args: []backend.Arg{{Kind: backend.ArgPtr, Bits: uint64(st.q)}, {Kind: backend.ArgInt32, Bits: 16}, {Kind: backend.ArgInt32, Bits: 5}}}
		if st.kn, err = dv.GraphAddKernelNode(st.g, []backend.GraphNode{cp}, kp); err != nil {
			return nil, err
		}
		// Nodes that touch the same memory are ordered, as on a GPU they must be.
		child, err := dv.GraphAddChildNode(st.g, []backend.GraphNode{st.kn}, st.captured)
		if err != nil {
			return nil, err
		}
		rec, err := dv.GraphAddEventRecordNode(st.g, nil, st.e)
		if err != nil {
			return nil, err
		}
		wait, err := dv.GraphAddEventWaitNode(st.g, nil, st.e2)
		if err != nil {
			return nil, err
		}
		if st.alloc, st.allocP, err = dv.GraphAddMemAllocNode(st.g, nil, 1024); err != nil {
			return nil, err
		}
		free, err := dv.GraphAddMemFreeNode(st.g, []backend.GraphNode{st.alloc}, st.allocP)
		if err != nil {
			return nil, err
		}
		return []any{st.g, st.empty, st.set, cp, st.kn, child, rec, wait, st.alloc, st.allocP, free}, dv.GraphAddDependencies(st.g, []backend.GraphNode{wait}, []backend.GraphNode{rec})
	}},
	{"ReadGraph", []string{"GraphNodes", "GraphRootNodes", "GraphEdges", "GraphNodeType", "GraphClone", "GraphDebugDot"}, func(dv backend.Device, st *pstate) (v any, err error) {
		nodes, err := dv.GraphNodes(st.g)
		if err != nil {
			return nil, err
		}
		roots, err := dv.GraphRootNodes(st.g)
		if err != nil {
			return nil, err
		}
		from, to, err := dv.GraphEdges(st.g)
		if err != nil {
			return nil, err
		}
		typ, err := dv.GraphNodeType(st.kn)
		if err != nil {
			return nil, err
		}
		if st.clone, err = dv.GraphClone(st.g); err != nil {
			return nil, err
		}
		return []any{nodes, roots, from, to, typ, st.clone}, dv.GraphDebugDot(st.g, st.dot)
	}},
	{"GraphAddDependenciesMismatch", nil, func(dv backend.Device, st *pstate) (any, error) {
		return nil, dv.GraphAddDependencies(st.g, []backend.GraphNode{st.empty}, nil)
	}},
	{"RunGraph", []string{"GraphInstantiate", "GraphUpload", "GraphLaunch", "GraphLaunchN", "GraphExecKernelNodeSetParams", "GraphNodeSetEnabled", "GraphExecUpdate", "GraphExecDestroy", "GraphDestroy"}, func(dv backend.Device, st *pstate) (v any, err error) {
		if st.x, err = dv.GraphInstantiate(st.g, 0); err != nil {
			return nil, err
		}
		if err := dv.GraphUpload(st.x, st.s); err != nil {
			return nil, err
		}
		if err := dv.GraphLaunch(st.x, st.s); err != nil {
			return nil, err
		}
		n, err := dv.GraphLaunchN(st.x, st.s, 3)
		if err != nil {
			return n, err
		}
		kp := backend.KernelNode{Kernel: st.k, Grid: backend.Dim3{X: 1, Y: 1, Z: 1}, Block: backend.Dim3{X: 16, Y: 1, Z: 1},
			Args: []backend.Arg{{Kind: backend.ArgPtr, Bits: uint64(st.q)}, {Kind: backend.ArgInt32, Bits: 16}, {Kind: backend.ArgInt32, Bits: 6}}}
		if err := dv.GraphExecKernelNodeSetParams(st.x, st.kn, kp); err != nil {
			return nil, err
		}
		if err := dv.GraphNodeSetEnabled(st.x, st.set, false); err != nil {
			return nil, err
		}
		info, err := dv.GraphExecUpdate(st.x, st.clone)
		if err != nil {
			return info, err
		}
		if err := dv.StreamSynchronize(st.s); err != nil {
			return nil, err
		}
		if err := dv.GraphExecDestroy(st.x); err != nil {
			return nil, err
		}
		if err := dv.GraphDestroy(st.clone); err != nil {
			return nil, err
		}
		return []any{st.x, n, info}, dv.GraphDestroy(st.g)
	}},
	{"GraphExecUpdateOfNothing", nil, func(dv backend.Device, st *pstate) (any, error) { return dv.GraphExecUpdate(0x42, 0x43) }},
	{"GraphLaunchNOfNothing", nil, func(dv backend.Device, st *pstate) (any, error) { return dv.GraphLaunchN(0x42, st.s, 2) }},
	// The simulator runs in one process and has no IPC or external objects: these calls fail
	// with cudaerr.NotSupported, and must fail alike through the worker.
	{"IPC", []string{"IpcGetMemHandle", "IpcOpenMemHandle", "IpcCloseMemHandle", "IpcGetEventHandle", "IpcOpenEventHandle", "MemPoolExportPointer", "MemPoolImportPointer"}, func(dv backend.Device, st *pstate) (any, error) {
		var errs []string
		note := func(err error) { errs = append(errs, errText(err)) }
		h, err := dv.IpcGetMemHandle(st.p)
		note(err)
		_, err = dv.IpcOpenMemHandle(h, backend.IpcMemLazyEnablePeerAccess)
		note(err)
		note(dv.IpcCloseMemHandle(st.p))
		h, err = dv.IpcGetEventHandle(st.e)
		note(err)
		_, err = dv.IpcOpenEventHandle(h)
		note(err)
		h, err = dv.MemPoolExportPointer(st.p)
		note(err)
		_, err = dv.MemPoolImportPointer(st.pool, h)
		note(err)
		return errs, nil
	}},
	{"External", []string{"ExternalMemoryMappedBuffer", "ExternalMemoryMappedMipmappedArray", "DestroyExternalMemory", "SignalExternalSemaphore", "WaitExternalSemaphore", "DestroyExternalSemaphore"}, func(dv backend.Device, st *pstate) (any, error) {
		var errs []string
		_, err := dv.ExternalMemoryMappedBuffer(1, 0, 16)
		_, aerr := dv.ExternalMemoryMappedMipmappedArray(1, 0, cuda.Channels[float32](1), backend.Extent3D{Width: 8, Height: 8}, 2, backend.ArrayColorAttachment)
		errs = append(errs, errText(err), errText(aerr), errText(dv.DestroyExternalMemory(1)), errText(dv.SignalExternalSemaphore(1, 1, st.s)),
			errText(dv.WaitExternalSemaphore(1, 1, st.s)), errText(dv.DestroyExternalSemaphore(1)))
		return errs, nil
	}},
	{"Peer", []string{"CanAccessPeer", "P2PAttribute", "EnablePeerAccess", "DisablePeerAccess", "MemcpyPeerAsync"}, func(dv backend.Device, st *pstate) (any, error) {
		// The simulator has one device here: the calls about a peer fail alike.
		can, err := dv.CanAccessPeer(0)
		if err != nil {
			return nil, err
		}
		attr, aerr := dv.P2PAttribute(backend.P2PAccessSupported, 0)
		en, dis := dv.EnablePeerAccess(1), dv.DisablePeerAccess(1)
		if err := dv.MemcpyPeerAsync(st.q, 0, st.p, 0, 64, st.s); err != nil {
			return nil, err
		}
		return []any{can, attr, errText(aerr), errText(en), errText(dis)}, dv.StreamSynchronize(st.s)
	}},
	{"Synchronize", []string{"Synchronize", "LastError"}, func(dv backend.Device, st *pstate) (any, error) {
		if err := dv.Synchronize(); err != nil {
			return nil, err
		}
		return nil, dv.LastError()
	}},
	// Host memory: each process has its own addresses, so the steps compare what the memory
	// holds and what the calls say of it, not the addresses.
	{"HostMemory", []string{"HostAlloc", "CopyHtoD", "CopyDtoH", "HostDevicePointer", "PointerAttributes"}, func(dv backend.Device, st *pstate) (v any, err error) {
		if st.hp, err = dv.HostAlloc(4096, backend.HostAllocMapped); err != nil {
			return nil, err
		}
		buf := unsafe.Slice((*byte)(st.hp), 4096)
		for i := range buf {
			buf[i] = byte(i)
		}
		if err := dv.CopyHtoD(st.p, st.hp, 4096, st.s); err != nil {
			return nil, err
		}
		if err := dv.Memset(st.p, 0xee, 16, st.s); err != nil {
			return nil, err
		}
		if err := dv.StreamSynchronize(st.s); err != nil { // the copy reads buf when it runs
			return nil, err
		}
		clear(buf)
		if err := dv.CopyDtoH(st.hp, st.p, 4096, st.s); err != nil {
			return nil, err
		}
		if err := dv.StreamSynchronize(st.s); err != nil {
			return nil, err
		}
		dp, err := dv.HostDevicePointer(st.hp)
		if err != nil {
			return nil, err
		}
		attrs, err := dv.PointerAttributes(uintptr(st.hp))
		return []any{append([]byte(nil), buf...), dp != 0, attrs.Type, attrs.HostPointer == uintptr(st.hp)}, err
	}},
	// The flags HostAlloc was given, inside the allocation too; memory not from it is refused.
	{"HostGetFlags", []string{"HostGetFlags"}, func(dv backend.Device, st *pstate) (any, error) {
		f0, err := dv.HostGetFlags(st.hp)
		if err != nil {
			return nil, err
		}
		f1, err := dv.HostGetFlags(unsafe.Add(st.hp, 100))
		if err != nil {
			return nil, err
		}
		var local [8]byte
		_, err = dv.HostGetFlags(unsafe.Pointer(&local[0]))
		return []any{f0, f1, errors.Is(err, cudaerr.InvalidValue)}, nil
	}},
	{"BatchCopy", []string{"MemcpyBatchAsync"}, func(dv backend.Device, st *pstate) (any, error) {
		// Host to device, device to device, device to host, in one batch; then a batch whose
		// third copy runs past the end of q, which must name that copy.
		buf := unsafe.Slice((*byte)(st.hp), 4096)
		for i := range buf {
			buf[i] = byte(3 * i)
		}
		half := unsafe.Add(st.hp, 2048)
		idx, err := dv.MemcpyBatchAsync([]backend.BatchCopy{
			{Dst: st.p, SrcHost: st.hp, N: 1024},
			{Dst: st.q, Src: st.p + 4096, N: 512}, // not written by this batch
			{DstHost: half, Src: st.q + 8192, N: 256},
		}, st.s)
		if err != nil {
			return idx, err
		}
		if err := dv.StreamSynchronize(st.s); err != nil {
			return nil, err
		}
		bad, berr := dv.MemcpyBatchAsync([]backend.BatchCopy{
			{Dst: st.q, Src: st.p, N: 64},
			{Dst: st.q + 64, Src: st.p, N: 64},
			{Dst: st.q + (1<<16 - 32), Src: st.p, N: 64},
		}, st.s)
		empty, eerr := dv.MemcpyBatchAsync(nil, st.s)
		return []any{idx, append([]byte(nil), buf[2048:2048+256]...), bad, errText(berr), empty, eerr}, dv.StreamSynchronize(st.s)
	}},
	{"PointerAttributesOfDevice", nil, func(dv backend.Device, st *pstate) (any, error) { return dv.PointerAttributes(uintptr(st.p)) }},
	{"HostGraphNodes", []string{"GraphAddCopyHtoD", "GraphAddCopyDtoH"}, func(dv backend.Device, st *pstate) (any, error) {
		g, err := dv.GraphCreate()
		if err != nil {
			return nil, err
		}
		a, err := dv.GraphAddCopyHtoD(g, nil, st.p, st.hp, 64)
		if err != nil {
			return nil, err
		}
		b, err := dv.GraphAddCopyDtoH(g, []backend.GraphNode{a}, st.hp, st.p, 64)
		if err != nil {
			return nil, err
		}
		return []any{g, a, b}, dv.GraphDestroy(g)
	}},
	{"Pitched", []string{"MallocPitch", "Copy2DHtoD", "Copy2DDtoD", "Memset2D", "Copy2DDtoH"}, func(dv backend.Device, st *pstate) (any, error) {
		// 7 rows of 5 bytes: host rows 8 apart, device rows a pitch apart.
		p, pitch, err := dv.MallocPitch(5, 7)
		if err != nil {
			return nil, err
		}
		defer func() { _ = dv.Free(p) }()
		buf := unsafe.Slice((*byte)(st.hp), 4096)
		for i := range buf[:56] {
			buf[i] = byte(i + 1)
		}
		if err := dv.Copy2DHtoD(p, pitch, st.hp, 8, 5, 7, st.s); err != nil {
			return nil, err
		}
		if err := dv.Memset2D(p+1, pitch, 0xab, 2, 3, st.s); err != nil {
			return nil, err
		}
		q, qpitch, err := dv.MallocPitch(5, 7)
		if err != nil {
			return nil, err
		}
		defer func() { _ = dv.Free(q) }()
		if err := dv.Copy2DDtoD(q, qpitch, p, pitch, 5, 7, st.s); err != nil {
			return nil, err
		}
		if err := dv.StreamSynchronize(st.s); err != nil { // the copy reads buf when it runs
			return nil, err
		}
		clear(buf[:64])
		if err := dv.Copy2DDtoH(st.hp, 9, q, qpitch, 5, 7, st.s); err != nil {
			return nil, err
		}
		if err := dv.StreamSynchronize(st.s); err != nil {
			return nil, err
		}
		return []any{pitch, append([]byte(nil), buf[:64]...)}, nil
	}},
	{"Textures", textureParityMethods, textureParity}, // parity_texture_test.go
	{"Surfaces", surfaceParityMethods, surfaceParity},
	{"Arrays", arrayParityMethods, arrayParity}, // parity_array_test.go
	{"Teardown", []string{"HostFree", "EventDestroy", "StreamDestroy", "MemPoolDestroy", "UnloadModule", "Free"}, func(dv backend.Device, st *pstate) (any, error) {
		var errs []string
		for _, err := range []error{dv.HostFree(st.hp), dv.EventDestroy(st.e), dv.EventDestroy(st.e2), dv.StreamDestroy(st.s),
			dv.MemPoolDestroy(st.pool), dv.UnloadModule(st.mod), dv.Free(st.managed), dv.Free(st.q), dv.Free(st.p)} {
			errs = append(errs, errText(err))
		}
		return errs, nil
	}},
	{"DoubleFree", nil, func(dv backend.Device, st *pstate) (any, error) { return nil, dv.Free(st.p) }},
}

// refusedRemotely are the methods an isolated device refuses by design, and why; for these
// the parity is that the worker is never asked and the call fails with cudaerr.NotSupported.
var refusedRemotely = map[string]struct {
	why string
	run func(dv backend.Device) error
}{
	"HostRegister": {"memory the parent already has cannot be shared with the worker after the fact", func(dv backend.Device) error {
		b := make([]byte, 64)
		return dv.HostRegister(unsafe.Pointer(&b[0]), 64, 0)
	}},
	"HostUnregister": {"nothing is ever registered (HostRegister is refused)", func(dv backend.Device) error {
		b := make([]byte, 64)
		return dv.HostUnregister(unsafe.Pointer(&b[0]))
	}},
	"ManagedHost": {"managed memory is mapped in the worker only", func(dv backend.Device) error {
		_, err := dv.ManagedHost(0x1000, 16)
		return err
	}},
	"LaunchHostFunc": {"the function is a closure of the parent", func(dv backend.Device) error { return dv.LaunchHostFunc(0, func() {}) }},
	"GraphAddHostNode": {"the function is a closure of the parent", func(dv backend.Device) error {
		_, err := dv.GraphAddHostNode(1, nil, func() {})
		return err
	}},
	"ImportExternalMemoryFD": {"the descriptor is the parent's", func(dv backend.Device) error {
		_, err := dv.ImportExternalMemoryFD(0, 16, 0)
		return err
	}},
	"ImportExternalSemaphoreFD": {"the descriptor is the parent's", func(dv backend.Device) error {
		_, err := dv.ImportExternalSemaphoreFD(0, backend.SemaphoreOpaqueFD)
		return err
	}},
	"DriverEntryPoint": {"the address would be in the worker's process", func(dv backend.Device) error {
		_, err := dv.DriverEntryPoint("cuDriverGetVersion", 0, backend.DriverEntryLegacyStream)
		return err
	}},
	"MemPoolExportFD": {"the descriptor would be the worker's", func(dv backend.Device) error {
		_, err := dv.MemPoolExportFD(1)
		return err
	}},
	"MemPoolImportFD": {"the descriptor is the parent's", func(dv backend.Device) error {
		_, err := dv.MemPoolImportFD(0)
		return err
	}},
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestSameAnswersAsInProcess runs the same calls on the simulator in process and through a
// worker serving an identical one (the simulator is deterministic, so handles and addresses
// agree) and compares every result and error: what crosses the wire must not change them.
func TestSameAnswersAsInProcess(t *testing.T) {
	_, rdv := open(t)
	ldv, err := newSim().Open(0)
	require.NoError(t, err)
	dir := t.TempDir()
	lst := &pstate{dot: filepath.Join(dir, "local.dot")}
	rst := &pstate{dot: filepath.Join(dir, "remote.dot")}

	for _, st := range paritySteps {
		lv, lerr := st.run(ldv, lst)
		rv, rerr := st.run(rdv, rst)
		assert.Equal(t, lv, rv, st.name)
		if lerr == nil {
			assert.NoError(t, rerr, st.name)
			continue
		}
		require.Error(t, rerr, st.name)
		assert.Equal(t, lerr.Error(), rerr.Error(), st.name)
		if c, ok := cudaerr.CodeOf(lerr); ok {
			assert.ErrorIs(t, rerr, c, st.name)
		}
		assert.Equal(t, cudaerr.IsSticky(lerr), cudaerr.IsSticky(rerr), st.name)
	}
	for name, r := range refusedRemotely {
		err := r.run(rdv)
		require.ErrorIs(t, err, cudaerr.NotSupported, name)
		assert.Contains(t, err.Error(), "not supported on an isolated device", name)
	}
	_, _, err = rdv.MemInfo()
	require.NoError(t, err, "the device stays usable")
}

// TestEveryMethodHasAParityStep fails when a backend.Device method has neither a parity step
// nor a reason the isolated device refuses it, so a method added to the interface gets one.
func TestEveryMethodHasAParityStep(t *testing.T) {
	covered := map[string]string{}
	for _, st := range paritySteps {
		for _, m := range st.covers {
			covered[m] = st.name
		}
	}
	it := reflect.TypeFor[backend.Device]()
	require.Positive(t, it.NumMethod())
	for i := range it.NumMethod() {
		name := it.Method(i).Name
		_, step := covered[name]
		r, refused := refusedRemotely[name]
		assert.True(t, step || refused, "backend.Device.%s has no parity step in parity_test.go", name)
		assert.False(t, step && refused, "backend.Device.%s has a step and is refused", name)
		if refused {
			assert.NotEmpty(t, r.why, name)
		}
		delete(covered, name)
	}
	assert.Empty(t, covered, "steps cover methods backend.Device does not have")
	for name := range refusedRemotely {
		_, ok := it.MethodByName(name)
		assert.True(t, ok, "refusedRemotely names %s, which backend.Device does not have", name)
	}
}
