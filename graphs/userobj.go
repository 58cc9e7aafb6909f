package graphs

import (
	"context"
	"fmt"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
)

// UserObject is a reference-counted object of a device (cudaUserObject_t) that lets a Go
// resource live exactly as long as the graphs that use it: a graph given a reference passes
// one on to its clones, to the graphs it becomes a child of and to the executable graphs made
// from it, and the object is released once every holder is destroyed and the launches of the
// executable graphs holding it are done. NewUserObject's caller holds the first reference.
// Isolated devices refuse user objects (cudaerr.NotSupported): the release function is a
// closure of the parent process.
type UserObject struct {
	dev *device.Device
	h   backend.UserObject
}

// NewUserObject makes a user object on dev holding one reference, the caller's. release runs
// once, on a goroutine of its own, after the last reference is gone; it may call gpuactor
// (not waiting on the device's work that holds the object), and a panic in it ends the
// program, as in any goroutine.
func NewUserObject(ctx context.Context, dev *device.Device, release func()) (*UserObject, error) {
	if dev == nil || release == nil {
		return nil, invalid("NewUserObject needs a device and a release function")
	}
	return onDevice(ctx, dev, func(rt backend.Device) (*UserObject, error) {
		// The runtime calls the destructor on its own thread, which must not call CUDA: the
		// goroutine frees release to do so.
		h, err := rt.UserObjectCreate(func() { go release() })
		if err != nil {
			return nil, fmt.Errorf("gpuactor/graphs: creating a user object: %w", err)
		}
		return &UserObject{dev: dev, h: h}, nil
	})
}

// Device is the device the object belongs to.
func (o *UserObject) Device() *device.Device {
	if o == nil {
		return nil
	}
	return o.dev
}

func (o *UserObject) do(ctx context.Context, what string, op func(rt backend.Device) error) error {
	if o == nil {
		return invalid("%s of a nil user object", what)
	}
	_, err := onDevice(ctx, o.dev, func(rt backend.Device) (struct{}, error) {
		if err := op(rt); err != nil {
			return struct{}{}, fmt.Errorf("gpuactor/graphs: %s: %w", what, err)
		}
		return struct{}{}, nil
	})
	return err
}

// Retain adds a reference of the caller's; it returns once added.
func (o *UserObject) Retain(ctx context.Context) error {
	return o.do(ctx, "retaining a user object", func(rt backend.Device) error { return rt.UserObjectRetain(o.h, 1) })
}

// Release drops one of the caller's references; it returns once dropped. Releasing a
// reference the caller does not hold is an error (on the simulator; CUDA does not check).
func (o *UserObject) Release(ctx context.Context) error {
	return o.do(ctx, "releasing a user object", func(rt backend.Device) error { return rt.UserObjectRelease(o.h, 1) })
}

// userObject runs op on g's actor thread after checking that o is of g's device.
func (g *Graph) userObject(ctx context.Context, o *UserObject, what string, op func(rt backend.Device) error) error {
	if o == nil {
		return invalid("%s: nil user object", what)
	}
	if g != nil && o.dev != g.dev {
		return wrongDevice("user object", o.dev, g.dev)
	}
	_, err := exec(ctx, g, func(rt backend.Device, _ *core.Tracker) (struct{}, error) {
		if err := op(rt); err != nil {
			return struct{}{}, fmt.Errorf("gpuactor/graphs: %s: %w", what, err)
		}
		return struct{}{}, nil
	})
	return err
}

// RetainUserObject gives the graph a new reference to o, which it keeps until it is destroyed
// (or ReleaseUserObject), passing references on to its copies.
func (g *Graph) RetainUserObject(ctx context.Context, o *UserObject) error {
	return g.userObject(ctx, o, "a graph retaining a user object", func(rt backend.Device) error {
		return rt.GraphRetainUserObject(g.h, o.h, 1, false)
	})
}

// TakeUserObject moves one of the caller's references to o to the graph: after it the caller
// holds one reference fewer, and o lives as long as the graph and its copies need it.
func (g *Graph) TakeUserObject(ctx context.Context, o *UserObject) error {
	return g.userObject(ctx, o, "a graph taking a user object", func(rt backend.Device) error {
		return rt.GraphRetainUserObject(g.h, o.h, 1, true)
	})
}

// ReleaseUserObject drops one of the graph's references to o; copies made before keep theirs.
func (g *Graph) ReleaseUserObject(ctx context.Context, o *UserObject) error {
	return g.userObject(ctx, o, "a graph releasing a user object", func(rt backend.Device) error {
		return rt.GraphReleaseUserObject(g.h, o.h, 1)
	})
}
