package core

import "github.com/gpuactor/gpuactor/internal/backend"

// KernelByHandle is the kernel of a module of d, looked up through gpuactor, whose backend
// handle is h, or nil when none is (h is 0, the kernel's module was closed, or the kernel was
// never looked up: the runtime's handle names no Kernel then). On d's actor thread.
func (d *Device) KernelByHandle(h backend.Kernel) *Kernel {
	if h == 0 {
		return nil
	}
	for m := range d.live.modules {
		if m.closed.Load() {
			continue
		}
		m.mu.Lock()
		for _, k := range m.kernels {
			if k.h == h {
				m.mu.Unlock()
				return k
			}
		}
		m.mu.Unlock()
	}
	return nil
}
