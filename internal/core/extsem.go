package core

import "github.com/gpuactor/gpuactor/internal/backend"

// Semaphores are the external semaphores imported into a device (interop.ImportSemaphore),
// by the object the caller holds. Packages below interop (graphs) take a semaphore as an
// interface, since they cannot name interop's type, and look its handle up here: an object
// that is not here was closed, or was never an imported semaphore. Actor thread only.
type Semaphores struct {
	live map[any]backend.ExternalSemaphore
}

type semaphoresKey struct{}

// Semaphores is d's registry of open external semaphores.
func (d *Device) Semaphores() *Semaphores {
	return d.Ext(semaphoresKey{}, func() any { return &Semaphores{live: map[any]backend.ExternalSemaphore{}} }).(*Semaphores)
}

// Add records that key is the open semaphore h.
func (s *Semaphores) Add(key any, h backend.ExternalSemaphore) { s.live[key] = h }

// Drop forgets key, once its semaphore is closed.
func (s *Semaphores) Drop(key any) { delete(s.live, key) }

// Handle is key's semaphore, if key is an open one.
func (s *Semaphores) Handle(key any) (backend.ExternalSemaphore, bool) {
	h, ok := s.live[key]
	return h, ok
}

// Of is the open semaphore whose handle is h, if any.
func (s *Semaphores) Of(h backend.ExternalSemaphore) (any, bool) {
	for k, v := range s.live {
		if v == h {
			return k, true
		}
	}
	return nil, false
}
