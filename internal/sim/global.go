package sim

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// loadGlobals gives each variable of spec.SimGlobals device memory holding its initial bytes,
// as loading a module places its __device__ and __constant__ variables. On failure nothing
// stays allocated.
func (d *device) loadGlobals(op string, m *module, globals map[string][]byte) error {
	m.globals = make(map[string]*allocation, len(globals))
	for name, init := range globals {
		if len(init) == 0 {
			d.freeGlobals(m)
			return d.fail(op, cudaerr.InvalidValue, "global %q of the module spec has no bytes: a variable has a size", name)
		}
		a, detail := d.mem.alloc(uint64(len(init)))
		if a == nil {
			d.freeGlobals(m)
			return d.fail(op, cudaerr.MemoryAllocation, "global %q: %s", name, detail)
		}
		copy(a.mem, init)
		m.globals[name] = a
	}
	return nil
}

// freeGlobals releases the memory of m's variables.
func (d *device) freeGlobals(m *module) {
	for _, a := range m.globals {
		d.mem.remove(a.addr)
	}
	m.globals = nil
}

// ModuleGlobal is the address and size of a variable the module spec declared in SimGlobals;
// another name is cudaerr.SymbolNotFound, naming it and the declared ones.
func (d *device) ModuleGlobal(h backend.Module, name string) (backend.DevicePtr, uint64, error) {
	const op = "cudaLibraryGetGlobal"
	if err := d.alive(op); err != nil {
		return 0, 0, err
	}
	m, err := d.module(op, h)
	if err != nil {
		return 0, 0, err
	}
	p, n, detail := m.global(name)
	if detail != "" {
		return 0, 0, d.fail(op, cudaerr.SymbolNotFound, "%s", detail)
	}
	return p, n, nil
}

// global finds a variable of m, or explains why there is none.
func (m *module) global(name string) (backend.DevicePtr, uint64, string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if a := m.globals[name]; a != nil {
		return backend.DevicePtr(a.addr), a.size, ""
	}
	have := "none"
	if len(m.globals) > 0 {
		names := make([]string, 0, len(m.globals))
		for n := range m.globals {
			names = append(names, fmt.Sprintf("%q", n))
		}
		slices.Sort(names)
		have = strings.Join(names, ", ")
	}
	return 0, 0, fmt.Sprintf("global %q is not declared for the simulator (ModuleSpec.SimGlobals has: %s)", name, have)
}

// moduleGlobals is what a simulated kernel of m sees as cuda.KernelCall.Globals.
type moduleGlobals struct{ m *module }

func (g moduleGlobals) Global(name string) (backend.DevicePtr, uint64, error) {
	p, n, detail := g.m.global(name)
	if detail != "" {
		return 0, 0, fmt.Errorf("%s", detail)
	}
	return p, n, nil
}
