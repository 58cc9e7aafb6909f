package graphs

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
	"github.com/gpuactor/gpuactor/streams"
)

// ErrWrongKind: a node of one kind used where a node of another kind is needed (the
// parameters of a kernel asked of a memset node, say). Nothing changes; the graph stays usable.
var ErrWrongKind = errors.New("gpuactor/graphs: wrong node kind")

// known sets what f sets on n, under the graph's lock, once n is added.
func (g *Graph) known(n *Node, err error, f func(*Node)) (*Node, error) {
	if err == nil && n != nil {
		g.mu.Lock()
		f(n)
		g.mu.Unlock()
	}
	return n, err
}

// of checks that n is a node of one of kinds.
func (n *Node) of(kinds ...Kind) error {
	if n == nil {
		return invalid("nil node")
	}
	if slices.Contains(kinds, n.kind) {
		return nil
	}
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = k.String()
	}
	return fmt.Errorf("%w: %s is a %s node, not a %s node", ErrWrongKind, n, n.kind, strings.Join(names, " or "))
}

// onNode checks n's kind, then runs op on its graph's actor thread; the runtime's errors name
// the node and what was done to it.
func onNode[T any](ctx context.Context, n *Node, what string, kinds []Kind, op func(rt backend.Device) (T, error)) (T, error) {
	var zero T
	if err := n.of(kinds...); err != nil {
		return zero, err
	}
	return exec(ctx, n.g, func(rt backend.Device, _ *core.Tracker) (T, error) {
		v, err := op(rt)
		if err != nil {
			return zero, fmt.Errorf("gpuactor/graphs: %s %s: %w", what, n, err)
		}
		return v, nil
	})
}

// KernelParams is what a kernel node launches. For a node added with AddKernel or given a
// kernel with SetKernel, it is what they were given. For another kernel node (captured from a
// stream, or of a clone), it is what the runtime reports (cudaGraphKernelNodeGetParams):
// Config's Grid, Block and SharedMem, and Kernel when the node's function is a kernel looked
// up through gpuactor on the graph's device whose module is open (else nil); Args is nil, as
// the runtime holds the arguments as bytes that cannot be turned back into Go values, and the
// launch attributes are Node.Attributes'.
type KernelParams struct {
	Kernel *device.Kernel
	Config cuda.LaunchConfig
	Args   []any
}

// KernelParams is what kernel node n launches (see the type): known exactly for nodes of
// AddKernel and SetKernel, read from the runtime for others. It returns once read.
func (n *Node) KernelParams(ctx context.Context) (KernelParams, error) {
	return onNode(ctx, n, "reading", []Kind{KernelNode}, func(rt backend.Device) (KernelParams, error) {
		n.g.mu.Lock()
		spec, args := n.spec, slices.Clone(n.args)
		n.g.mu.Unlock()
		if spec != nil {
			return KernelParams{Kernel: (*device.Kernel)(spec.Kernel()), Config: spec.Config(), Args: args}, nil
		}
		p, err := rt.GraphKernelNodeGetParams(n.h)
		if err != nil {
			return KernelParams{}, err
		}
		out := KernelParams{Config: cuda.LaunchConfig{Grid: p.Grid, Block: p.Block, SharedMem: p.SharedMem}}
		if k := coreDev(n.g.dev).KernelByHandle(p.Kernel); k != nil {
			out.Kernel = (*device.Kernel)(k)
		}
		return out, nil
	})
}

// SetKernel makes kernel node n launch k with cfg and args, checked as AddKernel checks them;
// the node's launch attributes stay. Executable graphs made before keep what they had.
func (n *Node) SetKernel(ctx context.Context, k *device.Kernel, cfg cuda.LaunchConfig, args ...any) error {
	if err := n.of(KernelNode); err != nil {
		return err
	}
	spec, err := core.PrepareLaunch(coreDev(n.g.dev), (*core.Kernel)(k), cfg, args)
	if err != nil {
		return err
	}
	_, err = onNode(ctx, n, "setting the kernel of", []Kind{KernelNode}, func(rt backend.Device) (struct{}, error) {
		p, err := spec.Node(rt)
		if err != nil {
			return struct{}{}, err
		}
		if err := rt.GraphKernelNodeSetParams(n.h, p); err != nil {
			return struct{}{}, err
		}
		n.g.mu.Lock()
		n.spec, n.args, n.label = &spec, args, k.Name()
		n.g.mu.Unlock()
		return struct{}{}, nil
	})
	return err
}

// CopyKind says which sides of a copy node are host memory.
type CopyKind int32

// Copy kinds. CopyDefault lets the runtime tell the sides from their addresses: the kind of
// copies between two devices' memory.
const (
	CopyHostToHost     = CopyKind(backend.CopyHostToHost)
	CopyHostToDevice   = CopyKind(backend.CopyHostToDevice)
	CopyDeviceToHost   = CopyKind(backend.CopyDeviceToHost)
	CopyDeviceToDevice = CopyKind(backend.CopyDeviceToDevice)
	CopyDefault        = CopyKind(backend.CopyDefault)
)

// String names the kind, e.g. "host-to-device".
func (k CopyKind) String() string {
	switch k {
	case CopyHostToHost:
		return "host-to-host"
	case CopyHostToDevice:
		return "host-to-device"
	case CopyDeviceToHost:
		return "device-to-host"
	case CopyDeviceToDevice:
		return "device-to-device"
	case CopyDefault:
		return "unified"
	}
	return fmt.Sprintf("CopyKind(%d)", int32(k))
}

// CopyParams is a 1D copy node's parameters: Bytes bytes from Src to Dst. The addresses are
// device addresses, or on a host side of the copy the address of its pinned host memory.
type CopyParams struct {
	Dst, Src uintptr
	Bytes    uint64
	Kind     CopyKind
}

// CopyParams is copy node n's parameters. A copy that is not 1D (captured from a 2D or 3D
// copy, or of arrays) is an error matching cudaerr.NotSupported: read a box copy with
// Copy3DParams.
func (n *Node) CopyParams(ctx context.Context) (CopyParams, error) {
	return onNode(ctx, n, "reading", []Kind{CopyNode}, func(rt backend.Device) (CopyParams, error) {
		p, err := rt.GraphMemcpyNodeGetParams(n.h)
		return CopyParams{Dst: uintptr(p.Dst), Src: uintptr(p.Src), Bytes: p.Bytes, Kind: CopyKind(p.Kind)}, err
	})
}

// copyParams resolves a copy of all of src into the start of dst, both device memory of d;
// on the actor thread.
func copyParams(d *device.Device, dst, src device.Mem) (backend.CopyNode, error) {
	dp, dn, err := coreDev(d).Resolve("copy destination", dst)
	if err != nil {
		return backend.CopyNode{}, err
	}
	sp, sn, err := coreDev(d).Resolve("copy source", src)
	if err != nil {
		return backend.CopyNode{}, err
	}
	if sn > dn {
		return backend.CopyNode{}, core.OutOfRange("copy of %d bytes into a %d-byte destination", sn, dn)
	}
	return backend.CopyNode{Dst: uint64(dp), Src: uint64(sp), Bytes: sn, Kind: backend.CopyDeviceToDevice}, nil
}

// uploadParams resolves a copy of the first Size(dst) bytes of pinned src into dst.
func uploadParams(d *device.Device, dst device.Mem, src *device.HostBuffer) (backend.CopyNode, error) {
	p, n, err := coreDev(d).Resolve("copy destination", dst)
	if err != nil {
		return backend.CopyNode{}, err
	}
	host, err := coreDev(d).ResolveHost("copy source", (*core.HostBuffer)(src), n)
	if err != nil {
		return backend.CopyNode{}, err
	}
	return backend.CopyNode{Dst: uint64(p), Src: uint64(uintptr(host)), Bytes: n, Kind: backend.CopyHostToDevice}, nil
}

// downloadParams resolves a copy of all of src into the start of pinned dst.
func downloadParams(d *device.Device, dst *device.HostBuffer, src device.Mem) (backend.CopyNode, error) {
	p, n, err := coreDev(d).Resolve("copy source", src)
	if err != nil {
		return backend.CopyNode{}, err
	}
	host, err := coreDev(d).ResolveHost("copy destination", (*core.HostBuffer)(dst), n)
	if err != nil {
		return backend.CopyNode{}, err
	}
	return backend.CopyNode{Dst: uint64(uintptr(host)), Src: uint64(p), Bytes: n, Kind: backend.CopyDeviceToHost}, nil
}

// setCopy makes copy node n the copy resolve gives.
func (n *Node) setCopy(ctx context.Context, resolve func() (backend.CopyNode, error)) error {
	_, err := onNode(ctx, n, "setting the copy of", []Kind{CopyNode}, func(rt backend.Device) (struct{}, error) {
		p, err := resolve()
		if err != nil {
			return struct{}{}, err
		}
		return struct{}{}, rt.GraphMemcpyNodeSetParams1D(n.h, p)
	})
	return err
}

// SetCopy makes copy node n copy all of src into the start of dst, both device memory of the
// graph's device. Executable graphs made before keep their copy (Exec.SetCopy changes theirs).
func (n *Node) SetCopy(ctx context.Context, dst, src device.Mem) error {
	if err := n.of(CopyNode); err != nil {
		return err
	}
	return n.setCopy(ctx, func() (backend.CopyNode, error) { return copyParams(n.g.dev, dst, src) })
}

// SetCopyToDevice makes copy node n copy the first Size(dst) bytes of pinned src into dst. The
// graph reads src at every launch: src must stay allocated while the graph may run.
func (n *Node) SetCopyToDevice(ctx context.Context, dst device.Mem, src *device.HostBuffer) error {
	if err := n.of(CopyNode); err != nil {
		return err
	}
	return n.setCopy(ctx, func() (backend.CopyNode, error) { return uploadParams(n.g.dev, dst, src) })
}

// SetCopyFromDevice makes copy node n copy all of src into the start of pinned dst. The graph
// writes dst at every launch: dst must stay allocated while the graph may run.
func (n *Node) SetCopyFromDevice(ctx context.Context, dst *device.HostBuffer, src device.Mem) error {
	if err := n.of(CopyNode); err != nil {
		return err
	}
	return n.setCopy(ctx, func() (backend.CopyNode, error) { return downloadParams(n.g.dev, dst, src) })
}

// MemsetParams is a memset node's parameters: Height rows of Width elements of ElementSize
// bytes (1, 2 or 4), rows Pitch bytes apart from Dst on, each element set to Value.
type MemsetParams struct {
	Dst         cuda.DevicePtr
	Pitch       uint64
	Value       uint32
	ElementSize uint32
	Width       uint64
	Height      uint64
}

// MemsetParams is memset node n's parameters.
func (n *Node) MemsetParams(ctx context.Context) (MemsetParams, error) {
	return onNode(ctx, n, "reading", []Kind{MemsetNode}, func(rt backend.Device) (MemsetParams, error) {
		p, err := rt.GraphMemsetNodeGetParams(n.h)
		return MemsetParams(p), err
	})
}

// memsetParams resolves setting every element of size es of dst to value.
func memsetParams(d *device.Device, dst device.Mem, value uint32, es uint32) (backend.MemsetNode, error) {
	p, n, err := coreDev(d).Resolve("memset destination", dst)
	if err != nil {
		return backend.MemsetNode{}, err
	}
	if n%uint64(es) != 0 {
		return backend.MemsetNode{}, invalid("memset destination of %d bytes is not a whole number of %d-byte values", n, es)
	}
	return backend.MemsetNode{Dst: p, Value: value, ElementSize: es, Width: n / uint64(es), Height: 1}, nil
}

func (n *Node) setMemset(ctx context.Context, dst device.Mem, value, es uint32) error {
	_, err := onNode(ctx, n, "setting the memset of", []Kind{MemsetNode}, func(rt backend.Device) (struct{}, error) {
		p, err := memsetParams(n.g.dev, dst, value, es)
		if err != nil {
			return struct{}{}, err
		}
		if err := rt.GraphMemsetNodeSetParams(n.h, p); err != nil {
			return struct{}{}, err
		}
		n.g.mu.Lock()
		n.label = fmt.Sprintf("%#x", value)
		n.g.mu.Unlock()
		return struct{}{}, nil
	})
	return err
}

// SetMemset makes memset node n set every byte of dst (device memory of the graph's device) to
// value.
func (n *Node) SetMemset(ctx context.Context, dst device.Mem, value byte) error {
	return n.setMemset(ctx, dst, uint32(value), 1)
}

// SetMemset32 makes memset node n set every 4-byte value of dst to value; dst's size must be
// a multiple of 4.
func (n *Node) SetMemset32(ctx context.Context, dst device.Mem, value uint32) error {
	return n.setMemset(ctx, dst, value, 4)
}

// SetHost makes host node n call fn at every launch instead of its function, as AddHost
// describes. Executable graphs made before keep calling the old function.
func (n *Node) SetHost(ctx context.Context, fn func()) error {
	if fn == nil {
		return invalid("SetHost of a nil function")
	}
	_, err := onNode(ctx, n, "setting the function of", []Kind{HostNode}, func(rt backend.Device) (struct{}, error) {
		return struct{}{}, rt.GraphHostNodeSetParams(n.g.h, n.h, hostFunc(n.g.res, fn))
	})
	return err
}

// ChildGraph is the graph child node n embeds (not the graph AddChild was given, which it
// copied). Changes to it change the node. It lives as long as n's graph: closing it is an
// error, and once n's graph is closed it is closed too.
func (n *Node) ChildGraph(ctx context.Context) (*Graph, error) {
	return onNode(ctx, n, "reading the graph of", []Kind{ChildNode}, func(rt backend.Device) (*Graph, error) {
		g := n.g
		g.mu.Lock()
		c := n.child
		g.mu.Unlock()
		if c != nil {
			return c, nil
		}
		h, err := rt.GraphChildGraphNodeGetGraph(n.h)
		if err != nil {
			return nil, err
		}
		root := g
		for root.parent != nil {
			root = root.parent
		}
		c = &Graph{dev: g.dev, h: h, res: g.res, parent: root, nodes: map[backend.GraphNode]*Node{}}
		g.mu.Lock()
		n.child = c
		g.mu.Unlock()
		return c, nil
	})
}

// nodeEvent is the handle of n's event, by its kind.
func (n *Node) nodeEvent(rt backend.Device) (backend.Event, error) {
	if n.kind == EventRecordNode {
		return rt.GraphEventRecordNodeGetEvent(n.h)
	}
	return rt.GraphEventWaitNodeGetEvent(n.h)
}

// Event is the event record node n records or wait node n waits for. Only events given to
// AddEventRecord, AddEventWait or SetEvent are known: a captured node's event is an error.
func (n *Node) Event(ctx context.Context) (*streams.Event, error) {
	return onNode(ctx, n, "reading the event of", []Kind{EventRecordNode, EventWaitNode}, func(rt backend.Device) (*streams.Event, error) {
		h, err := n.nodeEvent(rt)
		if err != nil {
			return nil, err
		}
		n.g.mu.Lock()
		e := n.event
		n.g.mu.Unlock()
		if e != nil {
			if eh, err := (*core.Event)(e).Handle(); err == nil && eh == h {
				return e, nil
			}
		}
		return nil, invalid("its event was not given through gpuactor (captured?)")
	})
}

// checkNodeEvent checks e for a node of kind k of a graph of dev: a recorded event must be of
// dev; a waited one may be of any device.
func checkNodeEvent(dev *device.Device, k Kind, e *streams.Event) error {
	if e == nil {
		return invalid("nil event")
	}
	if k == EventRecordNode && e.Device() != dev {
		return wrongDevice("event", e.Device(), dev)
	}
	return nil
}

// SetEvent makes event record node n record e (an event of the graph's device), or event
// wait node n wait for e (of any device). Executable graphs made before keep their event.
func (n *Node) SetEvent(ctx context.Context, e *streams.Event) error {
	if err := n.of(EventRecordNode, EventWaitNode); err != nil {
		return err
	}
	if err := checkNodeEvent(n.g.dev, n.kind, e); err != nil {
		return err
	}
	_, err := onNode(ctx, n, "setting the event of", []Kind{EventRecordNode, EventWaitNode}, func(rt backend.Device) (struct{}, error) {
		h, err := (*core.Event)(e).Handle()
		if err != nil {
			return struct{}{}, err
		}
		if n.kind == EventRecordNode {
			err = rt.GraphEventRecordNodeSetEvent(n.h, h)
		} else {
			err = rt.GraphEventWaitNodeSetEvent(n.h, h)
		}
		if err == nil {
			n.g.res.holdEvent(e, n.kind)
			n.g.mu.Lock()
			n.event = e
			n.g.mu.Unlock()
		}
		return struct{}{}, err
	})
	return err
}

// AllocParams is what an allocation node allocates: Size bytes at Address on the device of
// ordinal Device, the same address at every launch.
type AllocParams struct {
	Address cuda.DevicePtr
	Size    uint64
	Device  int
}

// AllocParams is what allocation node n allocates.
func (n *Node) AllocParams(ctx context.Context) (AllocParams, error) {
	return onNode(ctx, n, "reading", []Kind{AllocNode}, func(rt backend.Device) (AllocParams, error) {
		p, err := rt.GraphMemAllocNodeGetParams(n.h)
		return AllocParams{Address: p.Ptr, Size: p.Bytes, Device: p.Device}, err
	})
}

// FreeAddress is the address free node n frees.
func (n *Node) FreeAddress(ctx context.Context) (cuda.DevicePtr, error) {
	return onNode(ctx, n, "reading", []Kind{FreeNode}, func(rt backend.Device) (cuda.DevicePtr, error) {
		return rt.GraphMemFreeNodeGetParams(n.h)
	})
}
