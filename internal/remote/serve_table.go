package remote

import (
	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// handler runs one device method in the worker: it reads the arguments the parent's method
// wrote, in the same order, calls the device and writes the results. Both sides are the same
// build, so a layout never disagrees; the server still checks a short message, after the
// call, and reports it as a bug.
type handler func(dv backend.Device, in *dec, out *enc) error

// The helpers for the common shapes: a device call returning one scalar, or nothing.
func u64r[T ~uint64 | ~uintptr | ~uint32 | ~int32](out *enc, v T, err error) error {
	out.u64(uint64(v))
	return err
}

func s2(in *dec) backend.Stream    { return backend.Stream(in.u64()) }
func p2(in *dec) backend.DevicePtr { return backend.DevicePtr(in.u64()) }
func e2(in *dec) backend.Event     { return backend.Event(in.u64()) }
func g2(in *dec) backend.Graph     { return backend.Graph(in.u64()) }
func x2(in *dec) backend.GraphExec { return backend.GraphExec(in.u64()) }
func n2(in *dec) backend.GraphNode { return backend.GraphNode(in.u64()) }
func mp2(in *dec) backend.MemPool  { return backend.MemPool(in.u64()) }
func k2(in *dec) backend.Kernel    { return backend.Kernel(in.u64()) }
func b2(in *dec) byte              { return byte(in.u64()) }
func i2(in *dec) int               { return in.int() }

// inline answers a result and an error together, for the methods whose result holds even
// when they fail (GraphLaunchN's count, GraphExecUpdate's info).
func inline(out *enc, err error) error {
	if err == nil {
		out.i64(0)
		out.str("")
		return nil
	}
	code, msg := Codec{}.Encode(err)
	out.i64(code)
	out.str(msg)
	return nil
}

var handlers = [mCount]handler{
	mName: func(dv backend.Device, in *dec, out *enc) error {
		s, err := dv.Name()
		out.str(s)
		return err
	},
	mAttribute: func(dv backend.Device, in *dec, out *enc) error {
		v, err := dv.Attribute(backend.Attr(in.i64()))
		out.i64(int64(v))
		return err
	},
	mPCIBusID: func(dv backend.Device, in *dec, out *enc) error {
		s, err := dv.PCIBusID()
		out.str(s)
		return err
	},
	mMemInfo: func(dv backend.Device, in *dec, out *enc) error {
		f, t, err := dv.MemInfo()
		out.u64(f)
		out.u64(t)
		return err
	},
	mSynchronize: func(dv backend.Device, in *dec, out *enc) error { return dv.Synchronize() },
	mStreamPriorityRange: func(dv backend.Device, in *dec, out *enc) error {
		l, g, err := dv.StreamPriorityRange()
		out.i64(int64(l))
		out.i64(int64(g))
		return err
	},
	mLastError: func(dv backend.Device, in *dec, out *enc) error { return dv.LastError() },
	mMalloc: func(dv backend.Device, in *dec, out *enc) error {
		p, err := dv.Malloc(in.u64())
		return u64r(out, p, err)
	},
	mFree: func(dv backend.Device, in *dec, out *enc) error { return dv.Free(p2(in)) },
	mCopyDtoD: func(dv backend.Device, in *dec, out *enc) error {
		return dv.CopyDtoD(p2(in), p2(in), in.u64(), s2(in))
	},
	mMemset: func(dv backend.Device, in *dec, out *enc) error {
		return dv.Memset(p2(in), b2(in), in.u64(), s2(in))
	},
	mStreamCreate: func(dv backend.Device, in *dec, out *enc) error {
		s, err := dv.StreamCreate(in.u32(), i2(in))
		return u64r(out, s, err)
	},
	mStreamDestroy:     func(dv backend.Device, in *dec, out *enc) error { return dv.StreamDestroy(s2(in)) },
	mStreamSynchronize: func(dv backend.Device, in *dec, out *enc) error { return dv.StreamSynchronize(s2(in)) },
	mStreamQuery:       func(dv backend.Device, in *dec, out *enc) error { return dv.StreamQuery(s2(in)) },
	mStreamWaitEvent: func(dv backend.Device, in *dec, out *enc) error {
		return dv.StreamWaitEvent(s2(in), e2(in))
	},
	mEventCreate: func(dv backend.Device, in *dec, out *enc) error {
		e, err := dv.EventCreate(in.u32())
		return u64r(out, e, err)
	},
	mEventRecord:      func(dv backend.Device, in *dec, out *enc) error { return dv.EventRecord(e2(in), s2(in)) },
	mEventQuery:       func(dv backend.Device, in *dec, out *enc) error { return dv.EventQuery(e2(in)) },
	mEventSynchronize: func(dv backend.Device, in *dec, out *enc) error { return dv.EventSynchronize(e2(in)) },
	mEventElapsed: func(dv backend.Device, in *dec, out *enc) error {
		ms, err := dv.EventElapsed(e2(in), e2(in))
		out.f32(ms)
		return err
	},
	mEventDestroy: func(dv backend.Device, in *dec, out *enc) error { return dv.EventDestroy(e2(in)) },
	mLoadModule: func(dv backend.Device, in *dec, out *enc) error {
		kind := backend.ImageKind(in.u64())
		img := in.bytes()
		if in.err != nil {
			return in.err
		}
		// The image is a view into the request ring's buffer: copy it, as a backend may keep it.
		m, err := dv.LoadModule(backend.ModuleSpec{ImageKind: kind, Image: append([]byte(nil), img...)})
		return u64r(out, m, err)
	},
	mModuleKernel: func(dv backend.Device, in *dec, out *enc) error {
		k, err := dv.ModuleKernel(backend.Module(in.u64()), in.str())
		return u64r(out, k, err)
	},
	mUnloadModule: func(dv backend.Device, in *dec, out *enc) error {
		return dv.UnloadModule(backend.Module(in.u64()))
	},
	mLaunch: func(dv backend.Device, in *dec, out *enc) error {
		return dv.Launch(k2(in), in.dim3(), in.dim3(), in.u32(), s2(in), in.args())
	},

	mMallocAsync: func(dv backend.Device, in *dec, out *enc) error {
		p, err := dv.MallocAsync(in.u64(), s2(in))
		return u64r(out, p, err)
	},
	mMallocFromPoolAsync: func(dv backend.Device, in *dec, out *enc) error {
		p, err := dv.MallocFromPoolAsync(in.u64(), mp2(in), s2(in))
		return u64r(out, p, err)
	},
	mFreeAsync: func(dv backend.Device, in *dec, out *enc) error { return dv.FreeAsync(p2(in), s2(in)) },
	mMemPoolCreate: func(dv backend.Device, in *dec, out *enc) error {
		p, err := dv.MemPoolCreate(backend.PoolProps{Location: in.location(), HandleTypes: in.u32(), MaxSize: in.u64()})
		return u64r(out, p, err)
	},
	mMemPoolDestroy: func(dv backend.Device, in *dec, out *enc) error { return dv.MemPoolDestroy(mp2(in)) },
	mDefaultMemPool: func(dv backend.Device, in *dec, out *enc) error {
		p, err := dv.DefaultMemPool()
		return u64r(out, p, err)
	},
	mCurrentMemPool: func(dv backend.Device, in *dec, out *enc) error {
		p, err := dv.CurrentMemPool()
		return u64r(out, p, err)
	},
	mSetCurrentMemPool: func(dv backend.Device, in *dec, out *enc) error { return dv.SetCurrentMemPool(mp2(in)) },
	mMemPoolSetAttribute: func(dv backend.Device, in *dec, out *enc) error {
		return dv.MemPoolSetAttribute(mp2(in), backend.PoolAttr(in.i64()), in.u64())
	},
	mMemPoolGetAttribute: func(dv backend.Device, in *dec, out *enc) error {
		v, err := dv.MemPoolGetAttribute(mp2(in), backend.PoolAttr(in.i64()))
		return u64r(out, v, err)
	},
	mMemPoolTrimTo: func(dv backend.Device, in *dec, out *enc) error { return dv.MemPoolTrimTo(mp2(in), in.u64()) },
	mMemPoolSetAccess: func(dv backend.Device, in *dec, out *enc) error {
		return dv.MemPoolSetAccess(mp2(in), i2(in), backend.AccessFlags(in.i64()))
	},
	mMemPoolGetAccess: func(dv backend.Device, in *dec, out *enc) error {
		f, err := dv.MemPoolGetAccess(mp2(in), i2(in))
		return u64r(out, f, err)
	},
	mMallocManaged: func(dv backend.Device, in *dec, out *enc) error {
		p, err := dv.MallocManaged(in.u64(), in.u32())
		return u64r(out, p, err)
	},
	mMemPrefetch: func(dv backend.Device, in *dec, out *enc) error {
		return dv.MemPrefetch(p2(in), in.u64(), in.location(), s2(in))
	},
	mMemAdvise: func(dv backend.Device, in *dec, out *enc) error {
		return dv.MemAdvise(p2(in), in.u64(), backend.Advice(in.i64()), in.location())
	},
	mMemRangeAttribute: func(dv backend.Device, in *dec, out *enc) error {
		p, n, attr, k := p2(in), in.u64(), backend.RangeAttr(in.i64()), in.u64()
		if in.err != nil {
			return in.err
		}
		if k > 1<<16 {
			return &cudaerr.Error{Op: "cudaMemRangeGetAttribute", Code: cudaerr.InvalidValue, Message: "output of more than 65536 values"}
		}
		vals := make([]int32, k)
		err := dv.MemRangeAttribute(p, n, attr, vals)
		for _, v := range vals {
			out.i64(int64(v))
		}
		return err
	},
	mStreamAttachMem: func(dv backend.Device, in *dec, out *enc) error {
		return dv.StreamAttachMem(s2(in), p2(in), in.u64(), in.u32())
	},
	mPointerAttributes: func(dv backend.Device, in *dec, out *enc) error {
		a, err := dv.PointerAttributes(uintptr(in.u64()))
		out.i64(int64(a.Type))
		out.i64(int64(a.Device))
		out.u64(uint64(a.DevicePointer))
		out.u64(uint64(a.HostPointer))
		return err
	},

	mStreamBeginCapture: func(dv backend.Device, in *dec, out *enc) error {
		return dv.StreamBeginCapture(s2(in), backend.CaptureMode(in.i64()))
	},
	mStreamEndCapture: func(dv backend.Device, in *dec, out *enc) error {
		g, err := dv.StreamEndCapture(s2(in))
		return u64r(out, g, err)
	},
	mStreamCaptureInfo: func(dv backend.Device, in *dec, out *enc) error {
		ci, err := dv.StreamCaptureInfo(s2(in))
		out.i64(int64(ci.Status))
		out.u64(ci.ID)
		out.u64(uint64(ci.Graph))
		out.nodes(ci.Deps)
		return err
	},
	mGraphCreate: func(dv backend.Device, in *dec, out *enc) error {
		g, err := dv.GraphCreate()
		return u64r(out, g, err)
	},
	mGraphDestroy: func(dv backend.Device, in *dec, out *enc) error { return dv.GraphDestroy(g2(in)) },
	mGraphClone: func(dv backend.Device, in *dec, out *enc) error {
		g, err := dv.GraphClone(g2(in))
		return u64r(out, g, err)
	},
	mGraphNodes: func(dv backend.Device, in *dec, out *enc) error {
		ns, err := dv.GraphNodes(g2(in))
		out.nodes(ns)
		return err
	},
	mGraphRootNodes: func(dv backend.Device, in *dec, out *enc) error {
		ns, err := dv.GraphRootNodes(g2(in))
		out.nodes(ns)
		return err
	},
	mGraphEdges: func(dv backend.Device, in *dec, out *enc) error {
		from, to, err := dv.GraphEdges(g2(in))
		out.nodes(from)
		out.nodes(to)
		return err
	},
	mGraphNodeType: func(dv backend.Device, in *dec, out *enc) error {
		t, err := dv.GraphNodeType(n2(in))
		return u64r(out, t, err)
	},
	mGraphAddDependencies: func(dv backend.Device, in *dec, out *enc) error {
		return dv.GraphAddDependencies(g2(in), in.nodes(), in.nodes())
	},
	mGraphDebugDot: func(dv backend.Device, in *dec, out *enc) error { return dv.GraphDebugDot(g2(in), in.str()) },
	mGraphAddKernelNode: func(dv backend.Device, in *dec, out *enc) error {
		n, err := dv.GraphAddKernelNode(g2(in), in.nodes(), in.kernelNode())
		return u64r(out, n, err)
	},
	mGraphAddCopyDtoD: func(dv backend.Device, in *dec, out *enc) error {
		n, err := dv.GraphAddCopyDtoD(g2(in), in.nodes(), p2(in), p2(in), in.u64())
		return u64r(out, n, err)
	},
	mGraphAddMemsetNode: func(dv backend.Device, in *dec, out *enc) error {
		n, err := dv.GraphAddMemsetNode(g2(in), in.nodes(), p2(in), b2(in), in.u64())
		return u64r(out, n, err)
	},
	mGraphAddChildNode: func(dv backend.Device, in *dec, out *enc) error {
		n, err := dv.GraphAddChildNode(g2(in), in.nodes(), g2(in))
		return u64r(out, n, err)
	},
	mGraphAddEmptyNode: func(dv backend.Device, in *dec, out *enc) error {
		n, err := dv.GraphAddEmptyNode(g2(in), in.nodes())
		return u64r(out, n, err)
	},
	mGraphAddEventRecordNode: func(dv backend.Device, in *dec, out *enc) error {
		n, err := dv.GraphAddEventRecordNode(g2(in), in.nodes(), e2(in))
		return u64r(out, n, err)
	},
	mGraphAddEventWaitNode: func(dv backend.Device, in *dec, out *enc) error {
		n, err := dv.GraphAddEventWaitNode(g2(in), in.nodes(), e2(in))
		return u64r(out, n, err)
	},
	mGraphAddMemAllocNode: func(dv backend.Device, in *dec, out *enc) error {
		n, p, err := dv.GraphAddMemAllocNode(g2(in), in.nodes(), in.u64())
		out.u64(uint64(n))
		out.u64(uint64(p))
		return err
	},
	mGraphAddMemFreeNode: func(dv backend.Device, in *dec, out *enc) error {
		n, err := dv.GraphAddMemFreeNode(g2(in), in.nodes(), p2(in))
		return u64r(out, n, err)
	},
	mGraphInstantiate: func(dv backend.Device, in *dec, out *enc) error {
		x, err := dv.GraphInstantiate(g2(in), in.u64())
		return u64r(out, x, err)
	},
	mGraphExecDestroy: func(dv backend.Device, in *dec, out *enc) error { return dv.GraphExecDestroy(x2(in)) },
	mGraphUpload:      func(dv backend.Device, in *dec, out *enc) error { return dv.GraphUpload(x2(in), s2(in)) },
	mGraphLaunch:      func(dv backend.Device, in *dec, out *enc) error { return dv.GraphLaunch(x2(in), s2(in)) },
	mGraphLaunchN: func(dv backend.Device, in *dec, out *enc) error {
		x, s, n := x2(in), s2(in), i2(in)
		if in.err != nil {
			return in.err
		}
		k, err := dv.GraphLaunchN(x, s, n)
		out.i64(int64(k))
		return inline(out, err)
	},
	mGraphExecKernelNodeSetParams: func(dv backend.Device, in *dec, out *enc) error {
		return dv.GraphExecKernelNodeSetParams(x2(in), n2(in), in.kernelNode())
	},
	mGraphNodeSetEnabled: func(dv backend.Device, in *dec, out *enc) error {
		return dv.GraphNodeSetEnabled(x2(in), n2(in), in.bool())
	},
	mGraphExecUpdate: func(dv backend.Device, in *dec, out *enc) error {
		x, g := x2(in), g2(in)
		if in.err != nil {
			return in.err
		}
		info, err := dv.GraphExecUpdate(x, g)
		out.i64(int64(info.Result))
		out.u64(uint64(info.ErrorNode))
		out.u64(uint64(info.FromNode))
		return inline(out, err)
	},

	mIpcGetMemHandle: func(dv backend.Device, in *dec, out *enc) error {
		h, err := dv.IpcGetMemHandle(p2(in))
		out.handle(h)
		return err
	},
	mIpcOpenMemHandle: func(dv backend.Device, in *dec, out *enc) error {
		p, err := dv.IpcOpenMemHandle(in.handle(), in.u32())
		return u64r(out, p, err)
	},
	mIpcCloseMemHandle: func(dv backend.Device, in *dec, out *enc) error { return dv.IpcCloseMemHandle(p2(in)) },
	mIpcGetEventHandle: func(dv backend.Device, in *dec, out *enc) error {
		h, err := dv.IpcGetEventHandle(e2(in))
		out.handle(h)
		return err
	},
	mIpcOpenEventHandle: func(dv backend.Device, in *dec, out *enc) error {
		e, err := dv.IpcOpenEventHandle(in.handle())
		return u64r(out, e, err)
	},
	mMemPoolExportPointer: func(dv backend.Device, in *dec, out *enc) error {
		h, err := dv.MemPoolExportPointer(p2(in))
		out.handle(h)
		return err
	},
	mMemPoolImportPointer: func(dv backend.Device, in *dec, out *enc) error {
		p, err := dv.MemPoolImportPointer(mp2(in), in.handle())
		return u64r(out, p, err)
	},

	mCanAccessPeer: func(dv backend.Device, in *dec, out *enc) error {
		ok, err := dv.CanAccessPeer(i2(in))
		out.bool(ok)
		return err
	},
	mP2PAttribute: func(dv backend.Device, in *dec, out *enc) error {
		v, err := dv.P2PAttribute(backend.P2PAttr(in.i64()), i2(in))
		out.i64(int64(v))
		return err
	},
	mEnablePeerAccess:  func(dv backend.Device, in *dec, out *enc) error { return dv.EnablePeerAccess(i2(in)) },
	mDisablePeerAccess: func(dv backend.Device, in *dec, out *enc) error { return dv.DisablePeerAccess(i2(in)) },
	mMemcpyPeerAsync: func(dv backend.Device, in *dec, out *enc) error {
		return dv.MemcpyPeerAsync(p2(in), i2(in), p2(in), i2(in), in.u64(), s2(in))
	},

	mStreamGetDevice: func(dv backend.Device, in *dec, out *enc) error {
		v, err := dv.StreamGetDevice(s2(in))
		out.i64(int64(v))
		return err
	},
	mStreamGetFlags: func(dv backend.Device, in *dec, out *enc) error {
		v, err := dv.StreamGetFlags(s2(in))
		return u64r(out, v, err)
	},
	mStreamGetPriority: func(dv backend.Device, in *dec, out *enc) error {
		v, err := dv.StreamGetPriority(s2(in))
		out.i64(int64(v))
		return err
	},

	mExternalMemoryMappedBuffer: func(dv backend.Device, in *dec, out *enc) error {
		p, err := dv.ExternalMemoryMappedBuffer(backend.ExternalMemory(in.u64()), in.u64(), in.u64())
		return u64r(out, p, err)
	},
	mDestroyExternalMemory: func(dv backend.Device, in *dec, out *enc) error {
		return dv.DestroyExternalMemory(backend.ExternalMemory(in.u64()))
	},
	mSignalExternalSemaphore: func(dv backend.Device, in *dec, out *enc) error {
		return dv.SignalExternalSemaphore(backend.ExternalSemaphore(in.u64()), in.u64(), s2(in))
	},
	mWaitExternalSemaphore: func(dv backend.Device, in *dec, out *enc) error {
		return dv.WaitExternalSemaphore(backend.ExternalSemaphore(in.u64()), in.u64(), s2(in))
	},
	mDestroyExternalSemaphore: func(dv backend.Device, in *dec, out *enc) error {
		return dv.DestroyExternalSemaphore(backend.ExternalSemaphore(in.u64()))
	},
}
