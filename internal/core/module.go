package core

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/gpuactor/gpuactor/internal/backend"
)

// Module is loaded device code: the state device.Module is a face over.
type Module struct {
	dev    *Device
	name   string
	h      backend.Module
	sigs   Signatures
	closed atomic.Bool

	mu      sync.Mutex
	kernels map[string]*Kernel
	globals map[string]*Buffer // views of the module's variables, looked up so far (global.go)
}

// Kernel is a launchable function of a Module: the state device.Kernel is a face over.
type Kernel struct {
	mod    *Module
	name   string
	h      backend.Kernel
	params []param // nil: unknown, arguments are not checked
	ctl    kernelControl
}

// LoadModule loads spec on d, named name in errors, with the kernels' signatures sigs (nil:
// none known).
func LoadModule(ctx context.Context, d *Device, name string, spec backend.ModuleSpec, sigs Signatures) (*Module, error) {
	return Make(ctx, d, func(rt backend.Device, _ *Tracker) (*Module, error) {
		h, err := rt.LoadModule(spec)
		if err != nil {
			return nil, fmt.Errorf("gpuactor: loading module %s: %w", name, err)
		}
		m := &Module{dev: d, name: name, h: h, sigs: sigs, kernels: map[string]*Kernel{}}
		d.live.modules[m] = struct{}{}
		return m, nil
	}, func(_ backend.Device, _ *Tracker, m *Module) { _ = d.unload(m) })
}

// Name is the module's source name ("" for a nil module).
func (m *Module) Name() string {
	if m == nil {
		return ""
	}
	return m.name
}

// Device is the module's device.
func (m *Module) Device() *Device { return m.dev }

// Kernel looks up a kernel by its extern "C" name.
func (m *Module) Kernel(ctx context.Context, name string) (*Kernel, error) {
	m.mu.Lock()
	k, ok := m.kernels[name]
	m.mu.Unlock()
	if ok {
		return k, nil
	}
	k, err := Run(ctx, m.dev, func(rt backend.Device, _ *Tracker) (*Kernel, error) {
		if m.closed.Load() {
			return nil, Closed("module %s was closed", m.name)
		}
		h, err := rt.ModuleKernel(m.h, name)
		if err != nil {
			return nil, fmt.Errorf("%w: %q in module %s on the %s backend: %w", ErrNoKernel, name, m.name, m.dev.be.Name(), err)
		}
		params := m.sigs[name]
		if params == nil {
			// A cubin without source: the runtime may still know the parameters' sizes (12.4+).
			if sizes, err := rt.FuncParamSizes(h); err == nil {
				params = sizedParams(sizes)
			}
		}
		return &Kernel{mod: m, name: name, h: h, params: params}, nil
	}).Await(ctx)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if prev, ok := m.kernels[name]; ok {
		return prev, nil
	}
	m.kernels[name] = k
	return k, nil
}

// Close unloads the module once the GPU has passed the work queued so far on every stream of
// the device (its kernels may be queued on any), and returns once it is unloaded; the
// device's other work goes on meanwhile. From Close on its kernels can no longer be launched.
// Closing twice is an ErrClosed error.
func (m *Module) Close(ctx context.Context) error {
	if m == nil {
		return Invalid("Close of a nil module")
	}
	d := m.dev
	return RunTracked(ctx, d, func(rt backend.Device, tr *Tracker, done func(error)) error {
		if err := d.retireModule(m); err != nil {
			return err
		}
		tr.AfterAll(func(err error) {
			if err == nil {
				err = rt.UnloadModule(m.h)
			}
			done(err)
		})
		return nil
	}).Wait(ctx)
}

// retireModule refuses every later launch of m's kernels; on the actor thread.
func (d *Device) retireModule(m *Module) error {
	if m.closed.Load() {
		return Closed("module %s closed twice", m.name)
	}
	m.closed.Store(true)
	delete(d.live.modules, m)
	d.retireGlobals(m)
	return nil
}

// unload unloads m at once: when the device closes, once every stream has drained.
func (d *Device) unload(m *Module) error {
	if err := d.retireModule(m); err != nil {
		return err
	}
	return d.rt.UnloadModule(m.h)
}

// Name is the kernel's name ("" for a nil kernel).
func (k *Kernel) Name() string {
	if k == nil {
		return ""
	}
	return k.name
}

// Module is the kernel's module (nil for a nil kernel).
func (k *Kernel) Module() *Module {
	if k == nil {
		return nil
	}
	return k.mod
}

// Params lists the kernel's parameter kinds as gpuactor checks them, or nil when they are
// unknown (or the kernel is nil).
func (k *Kernel) Params() []ArgKind {
	if k == nil || k.params == nil {
		return nil
	}
	out := make([]ArgKind, len(k.params))
	for i, p := range k.params {
		out[i] = p.kind
	}
	return out
}
