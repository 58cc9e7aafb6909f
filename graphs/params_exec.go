package graphs

import (
	"context"
	"fmt"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
	"github.com/gpuactor/gpuactor/streams"
)

// Per-kind parameters of an executable graph's nodes: each setter changes node n (of the
// graph the Exec was made or updated from) for launches queued after it returns; launches
// queued before run as they were. The graph's node keeps its parameters.

// setNode checks that n is a node of x of one of kinds, then runs op on x's actor thread; the
// runtime's errors name the node.
func (x *Exec) setNode(ctx context.Context, n *Node, kinds []Kind, op func(rt backend.Device) error) error {
	if x == nil {
		return invalid("nil executable graph")
	}
	if err := x.member(n); err != nil {
		return err
	}
	if err := n.of(kinds...); err != nil {
		return err
	}
	return x.run(ctx, func(rt backend.Device, _ *core.Tracker) error {
		if err := op(rt); err != nil {
			return fmt.Errorf("gpuactor/graphs: setting %s of an executable graph: %w", n, err)
		}
		return nil
	})
}

// SetCopy makes copy node n copy all of src into the start of dst, both device memory of the
// Exec's device.
func (x *Exec) SetCopy(ctx context.Context, n *Node, dst, src device.Mem) error {
	return x.setNode(ctx, n, []Kind{CopyNode}, func(rt backend.Device) error {
		p, err := copyParams(x.dev, dst, src)
		if err != nil {
			return err
		}
		return rt.GraphExecMemcpyNodeSetParams1D(x.h, n.h, p)
	})
}

// SetCopyToDevice makes copy node n copy the first Size(dst) bytes of pinned src into dst;
// src must stay allocated while the Exec may run.
func (x *Exec) SetCopyToDevice(ctx context.Context, n *Node, dst device.Mem, src *device.HostBuffer) error {
	return x.setNode(ctx, n, []Kind{CopyNode}, func(rt backend.Device) error {
		p, err := uploadParams(x.dev, dst, src)
		if err != nil {
			return err
		}
		return rt.GraphExecMemcpyNodeSetParams1D(x.h, n.h, p)
	})
}

// SetCopyFromDevice makes copy node n copy all of src into the start of pinned dst; dst must
// stay allocated while the Exec may run.
func (x *Exec) SetCopyFromDevice(ctx context.Context, n *Node, dst *device.HostBuffer, src device.Mem) error {
	return x.setNode(ctx, n, []Kind{CopyNode}, func(rt backend.Device) error {
		p, err := downloadParams(x.dev, dst, src)
		if err != nil {
			return err
		}
		return rt.GraphExecMemcpyNodeSetParams1D(x.h, n.h, p)
	})
}

func (x *Exec) setMemset(ctx context.Context, n *Node, dst device.Mem, value, es uint32) error {
	return x.setNode(ctx, n, []Kind{MemsetNode}, func(rt backend.Device) error {
		p, err := memsetParams(x.dev, dst, value, es)
		if err != nil {
			return err
		}
		return rt.GraphExecMemsetNodeSetParams(x.h, n.h, p)
	})
}

// SetMemset makes memset node n set every byte of dst to value. A memset node's destination
// must stay on the device it was on.
func (x *Exec) SetMemset(ctx context.Context, n *Node, dst device.Mem, value byte) error {
	return x.setMemset(ctx, n, dst, uint32(value), 1)
}

// SetMemset32 makes memset node n set every 4-byte value of dst to value; dst's size must be a
// multiple of 4.
func (x *Exec) SetMemset32(ctx context.Context, n *Node, dst device.Mem, value uint32) error {
	return x.setMemset(ctx, n, dst, value, 4)
}

// SetHost makes host node n call fn, as AddHost describes; a panic in fn becomes the error of
// the launch's future.
func (x *Exec) SetHost(ctx context.Context, n *Node, fn func()) error {
	if fn == nil {
		return invalid("SetHost of a nil function")
	}
	return x.setNode(ctx, n, []Kind{HostNode}, func(rt backend.Device) error {
		return rt.GraphExecHostNodeSetParams(x.h, n.h, hostFunc(x.res, fn))
	})
}

// SetChild takes g's node parameters into child node n: g must have the topology of the graph
// n embeds (the same nodes, of the same kinds, with the same dependencies). The Exec keeps
// what g's nodes use (staged memory, host functions) for its life.
func (x *Exec) SetChild(ctx context.Context, n *Node, g *Graph) error {
	if g == nil {
		return invalid("SetChild of a nil graph")
	}
	if x != nil && g.dev != x.dev {
		return wrongDevice("child graph", g.dev, x.dev)
	}
	return x.setNode(ctx, n, []Kind{ChildNode}, func(rt backend.Device) error {
		if g.closed.Load() || g.parent != nil && g.parent.closed.Load() {
			return closed("graph")
		}
		if err := rt.GraphExecChildGraphNodeSetParams(x.h, n.h, g.h); err != nil {
			return err
		}
		x.res.hold(g.res)
		return nil
	})
}

// SetEvent makes event record node n record e (an event of the Exec's device), or event wait
// node n wait for e (of any device).
func (x *Exec) SetEvent(ctx context.Context, n *Node, e *streams.Event) error {
	if x == nil {
		return invalid("nil executable graph")
	}
	if n != nil {
		if err := checkNodeEvent(x.dev, n.kind, e); err != nil {
			return err
		}
	}
	return x.setNode(ctx, n, []Kind{EventRecordNode, EventWaitNode}, func(rt backend.Device) error {
		h, err := (*core.Event)(e).Handle()
		if err != nil {
			return err
		}
		if n.kind == EventRecordNode {
			err = rt.GraphExecEventRecordNodeSetEvent(x.h, n.h, h)
		} else {
			err = rt.GraphExecEventWaitNodeSetEvent(x.h, n.h, h)
		}
		if err == nil {
			x.res.holdEvent(e, n.kind)
		}
		return err
	})
}
