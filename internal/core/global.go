package core

import (
	"context"
	"fmt"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// Global is the module's __device__ or __constant__ variable name as a Buffer over the
// module's own memory: copies, memsets and kernel launches take it as any buffer, and check
// their ranges against the variable's size. The memory is the module's: the buffer is not
// counted in the device's usage, closing it frees nothing, and it is closed with the module.
// Looking a name up twice gives the same buffer while it is open.
func (m *Module) Global(ctx context.Context, name string) (*Buffer, error) {
	if m == nil {
		return nil, Invalid("Global of a nil module")
	}
	if name == "" {
		return nil, Invalid("Global of an empty name in module %s", m.name)
	}
	return Run(ctx, m.dev, func(rt backend.Device, _ *Tracker) (*Buffer, error) {
		if m.closed.Load() {
			return nil, Closed("module %s was closed", m.name)
		}
		m.mu.Lock()
		b := m.globals[name]
		m.mu.Unlock()
		if b != nil && !b.Closed() {
			return b, nil
		}
		p, size, err := rt.ModuleGlobal(m.h, name)
		if err != nil {
			return nil, fmt.Errorf("%w: %q in module %s on the %s backend: %w", ErrNoGlobal, name, m.name, m.dev.be.Name(), err)
		}
		b = &Buffer{}
		b.life.Store(lifeRefunded) // the module's memory: never charged, so never refunded
		m.dev.Adopt(b, p, size, KindDevice, releaseNothing)
		m.mu.Lock()
		if m.globals == nil {
			m.globals = map[string]*Buffer{}
		}
		m.globals[name] = b
		m.mu.Unlock()
		return b, nil
	}).Await(ctx)
}

// releaseNothing is the release of a module variable's buffer: unloading the module frees it.
func releaseNothing(backend.Device, cuda.DevicePtr, backend.Stream) error { return nil }

// retireGlobals refuses every later use of m's variables, as m is closed; on the actor thread.
func (d *Device) retireGlobals(m *Module) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, b := range m.globals {
		if !b.closed.Load() {
			b.closed.Store(true)
			d.live.buffers.remove(b)
		}
	}
	m.globals = nil
}
