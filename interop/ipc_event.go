package interop

import (
	"context"

	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
	"github.com/gpuactor/gpuactor/streams"
)

// ExportEvent returns the handle of e, an event made with streams.Interprocess and
// streams.DisableTiming, for OpenEvent in another process; it returns once the runtime has
// made the handle. An event made without those flags is an ErrInvalidArgument error.
//
// The export takes nothing from e: e stays this process's, and an importer that waits on or
// records it after e is closed does something undefined, so keep e until every importer has
// closed its event.
func ExportEvent(ctx context.Context, e *streams.Event) (EventHandle, error) {
	if e == nil {
		return EventHandle{}, core.Invalid("ExportEvent of a nil event")
	}
	ce := (*core.Event)(e)
	const want = backend.EventInterprocess | backend.EventDisableTiming
	if ce.Flags()&want != want {
		return EventHandle{}, core.Invalid("ExportEvent of an event made without streams.Interprocess and streams.DisableTiming")
	}
	h, err := core.Run(ctx, ce.Device(), func(rt backend.Device, _ *core.Tracker) (EventHandle, error) {
		eh, err := ce.Handle()
		if err != nil {
			return EventHandle{}, err
		}
		h, err := rt.IpcGetEventHandle(eh)
		return EventHandle(h), ipcError("ExportEvent", err)
	}).Await(ctx)
	if err == nil {
		ipcExported.noteEvent(h)
	}
	return h, err
}

// OpenEvent opens the event another process exported as h, on dev, the device the exporter
// made it on (or one that sees it), and returns it as an ordinary event of dev: its streams
// may Wait for it and Record it, and either process's records order the other's waits. It
// behaves as one made with Interprocess and DisableTiming, so Elapsed refuses it. It returns
// once the event is open; Close (or dev's Close) destroys this process's side only.
//
// A handle this process exported is an ErrOwnHandle error; one the runtime does not know, an
// ErrBadHandle error.
func OpenEvent(ctx context.Context, dev *device.Device, h EventHandle) (*streams.Event, error) {
	if dev == nil {
		return nil, core.Invalid("OpenEvent on a nil device")
	}
	if ipcExported.hasEvent(h) {
		return nil, ipcOwnHandle("event")
	}
	e, err := core.OpenEvent(ctx, (*core.Device)(dev), backend.EventInterprocess|backend.EventDisableTiming,
		func(rt backend.Device) (backend.Event, error) {
			e, err := rt.IpcOpenEventHandle(backend.IPCHandle(h))
			return e, ipcError("OpenEvent", err)
		})
	if err != nil {
		return nil, err
	}
	return (*streams.Event)(e), nil
}
