package backend

import (
	"sync"
	"sync/atomic"
)

// Health is one GPU's failure as this process sees it: a sticky fault poisons the GPU's
// primary context, which every handle the process opens on that GPU shares, so the failure
// belongs to the GPU, not to the handle that met it.
type Health struct{ failed atomic.Pointer[error] }

// Fail records err as the GPU's failure unless one was recorded first; it reports whether err
// is the one recorded.
func (h *Health) Fail(err error) bool { return h.failed.CompareAndSwap(nil, &err) }

// Err is the GPU's failure, or nil while it is healthy.
func (h *Health) Err() error {
	if p := h.failed.Load(); p != nil {
		return *p
	}
	return nil
}

// HealthBook holds the Health of each device ordinal of one backend, made on first use.
type HealthBook struct {
	mu sync.Mutex
	by map[int]*Health
}

// Of is the Health of device ordinal.
func (b *HealthBook) Of(ordinal int) *Health {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.by == nil {
		b.by = map[int]*Health{}
	}
	h := b.by[ordinal]
	if h == nil {
		h = &Health{}
		b.by[ordinal] = h
	}
	return h
}
