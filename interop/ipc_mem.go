package interop

import (
	"context"
	"fmt"
	"sync"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
)

// ExportMemory returns the handle of buf, a whole buffer from device.Device.MallocBytes, for OpenMemory in
// another process; it returns once the runtime has made the handle. A slice of a buffer, or
// memory that is not a plain device allocation (stream-ordered, managed, imported), is an
// ErrInvalidArgument error: pool memory is shared with ExportPool and ExportPointer instead.
//
// The export takes nothing from buf: buf stays this process's, and its Close frees it as
// usual. Every importer must close its import before buf is closed (or its device closed):
// what an importer reads or writes after that is undefined.
func ExportMemory(ctx context.Context, buf device.Mem) (MemHandle, error) {
	cd, err := core.Owner("exported buffer", buf)
	if err != nil {
		return MemHandle{}, err
	}
	b, off, n := core.Region(buf)
	if off != 0 || n != b.Size() {
		return MemHandle{}, core.Invalid("ExportMemory of bytes [%d, %d) of a %d-byte buffer: only a whole buffer can be exported", off, off+n, b.Size())
	}
	if k := b.Kind(); k != core.KindDevice {
		return MemHandle{}, core.Invalid("ExportMemory of %s memory: only memory from device.Device.MallocBytes can be exported (pool memory: ExportPool and ExportPointer)", k)
	}
	h, err := core.Run(ctx, cd, func(rt backend.Device, _ *core.Tracker) (MemHandle, error) {
		p, _, err := cd.Resolve("exported buffer", buf)
		if err != nil {
			return MemHandle{}, err
		}
		h, err := rt.IpcGetMemHandle(p)
		if err != nil {
			return MemHandle{}, ipcError("ExportMemory", err)
		}
		return MemHandle(h), nil
	}).Await(ctx)
	if err == nil {
		ipcExported.note(h)
	}
	return h, err
}

// OpenMemory maps the memory another process exported as h into dev and returns it as a
// buffer of size bytes, usable like any other by copies and kernels of dev; it returns once
// the memory is mapped. size must not exceed the exported buffer's size: the runtime cannot
// check it, and an access past the exported memory faults like any other.
//
// The buffer's Close (or dev's Close) unmaps the memory (cudaIpcCloseMemHandle) after the
// work queued on dev so far, and never frees it: the exporter owns it. The import holds
// nothing in the exporter, so the exporter must keep its buffer until every import is closed;
// after the exporter frees it or exits, the import's contents are undefined, though closing it
// stays clean.
//
// A handle this process exported is an ErrOwnHandle error (use the buffer itself); a handle
// already open on dev, an ErrAlreadyOpen error; a handle the runtime does not know (garbage,
// freed memory, an exporter that exited), an ErrBadHandle error.
func OpenMemory(ctx context.Context, dev *device.Device, h MemHandle, size uint64) (*device.Buffer, error) {
	if dev == nil {
		return nil, core.Invalid("OpenMemory on a nil device")
	}
	if size == 0 {
		return nil, core.Invalid("OpenMemory of 0 bytes")
	}
	if ipcExported.has(h) {
		return nil, ipcOwnHandle("memory")
	}
	cd := (*core.Device)(dev)
	reg := ipcRegistry(cd)
	return core.Make(ctx, cd, func(rt backend.Device, _ *core.Tracker) (*device.Buffer, error) {
		if _, open := reg.mem[h]; open {
			return nil, fmt.Errorf("%w: close the buffer the first OpenMemory gave before opening its handle again", ErrAlreadyOpen)
		}
		p, err := rt.IpcOpenMemHandle(backend.IPCHandle(h), backend.IpcMemLazyEnablePeerAccess)
		if err != nil {
			return nil, ipcError("OpenMemory", err)
		}
		if err := cd.Charge(core.KindImported, size); err != nil { // not limited: never refused
			return nil, err
		}
		b := new(device.Buffer)
		reg.mem[h] = struct{}{}
		cd.Adopt((*core.Buffer)(b), p, size, core.KindImported, func(rt backend.Device, p cuda.DevicePtr, _ backend.Stream) error {
			delete(reg.mem, h)
			return ipcError("closing imported memory", rt.IpcCloseMemHandle(p))
		})
		return b, nil
	}, func(_ backend.Device, _ *core.Tracker, b *device.Buffer) { _ = cd.FreeNow((*core.Buffer)(b)) })
}

// ipcOpened is a device's open imports, by handle: the actor thread's only.
type ipcOpened struct {
	mem map[MemHandle]struct{}
}

type ipcRegistryKey struct{}

func ipcRegistry(cd *core.Device) *ipcOpened {
	return cd.Ext(ipcRegistryKey{}, func() any { return &ipcOpened{mem: map[MemHandle]struct{}{}} }).(*ipcOpened)
}

// ipcExported is the handles this process exported: the runtime refuses to open them here, and
// refusing first says why. A handle stays listed after its memory is freed; it is then useless
// anywhere.
var ipcExported ipcExportSet

type ipcExportSet struct {
	mu     sync.Mutex
	mem    map[MemHandle]struct{}
	events map[EventHandle]struct{}
}

func (s *ipcExportSet) note(h MemHandle) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mem == nil {
		s.mem = map[MemHandle]struct{}{}
	}
	s.mem[h] = struct{}{}
}

func (s *ipcExportSet) has(h MemHandle) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.mem[h]
	return ok
}

func (s *ipcExportSet) noteEvent(h EventHandle) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.events == nil {
		s.events = map[EventHandle]struct{}{}
	}
	s.events[h] = struct{}{}
}

func (s *ipcExportSet) hasEvent(h EventHandle) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.events[h]
	return ok
}

func ipcOwnHandle(what string) error {
	return fmt.Errorf("%w: this process exported the %s handle; use the %s itself", ErrOwnHandle, what, what)
}
