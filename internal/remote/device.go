package remote

import (
	"context"
	"fmt"
	"os"
	"slices"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// Device is a device served by the worker: each method is one call, answered once the
// worker's backend returned. Handles and device pointers are the worker's, and cross as
// numbers the parent never dereferences. Like any backend.Device it is used from one goroutine
// (the device actor's); the worker runs its calls in order on the thread that opened it.
// Its methods are generated from backend.Device (client_gen.go), except those whose signature
// cannot say how they cross: the event board's (below), shared host memory's (hostmem.go) and
// the refused ones (refuse.go).
type Device struct {
	b       *Backend
	ordinal int
	board   *board // the event board; nil: every EventQuery is a call
}

var _ backend.Device = (*Device)(nil)

// do sends a request and returns the decoder of its answer.
func (d *Device) do(e enc) (dec, error) { return d.b.call(e) }

// begin sends e as a call without waiting for its answer, which answer collects: the two
// halves of do, for the methods marked //remote:startable.
func (d *Device) begin(e enc) (startedCall, error) { return d.b.start(context.Background(), e) }

// answer waits for a started call's answer.
func (c *startedCall) answer() (dec, error) { return c.wait(context.Background()) }

// void calls m with scalar arguments and no result.
func (d *Device) void(m method, args ...uint64) error {
	e := request(m)
	for _, a := range args {
		e.u64(a)
	}
	_, err := d.b.call(e)
	return err
}

// val calls m with scalar arguments and one scalar result.
func (d *Device) val(m method, args ...uint64) (uint64, error) {
	e := request(m)
	for _, a := range args {
		e.u64(a)
	}
	r, err := d.b.call(e)
	if err != nil {
		return 0, err
	}
	return r.u64(), nil
}

// Ordinal is the device's ordinal in the worker's backend.
func (d *Device) Ordinal() int { return d.ordinal }

// EventCreate makes an event.
func (d *Device) EventCreate(flags uint32) (backend.Event, error) {
	slot := -1
	if d.board != nil {
		slot = d.board.take()
	}
	v, err := d.val(mEventCreate, uint64(flags), uint64(int64(slot)))
	if slot >= 0 {
		if err != nil {
			d.board.free = append(d.board.free, slot)
		} else {
			d.board.slots[backend.Event(v)] = slot
			d.board.recs[slot] = 0
		}
	}
	return backend.Event(v), err
}

// EventRecord records e on s.
func (d *Device) EventRecord(e backend.Event, s backend.Stream) error {
	if err := d.postVoid(mEventRecord, s, uint64(e), uint64(s)); err != nil {
		return err
	}
	if d.board != nil {
		if slot, ok := d.board.slots[e]; ok {
			d.board.recs[slot]++
		}
	}
	return nil
}

// EventQuery reports whether e completed: from the event board when it can tell, else by
// asking the worker (board.go).
func (d *Device) EventQuery(e backend.Event) error {
	if d.board != nil {
		if err, ok := d.board.query(e, !d.b.proc.Failed()); ok {
			return err
		}
	}
	return d.void(mEventQuery, uint64(e))
}

// EventDestroy destroys an event.
func (d *Device) EventDestroy(e backend.Event) error {
	err := d.void(mEventDestroy, uint64(e))
	if d.board != nil {
		if slot, ok := d.board.slots[e]; ok {
			delete(d.board.slots, e)
			d.board.free = append(d.board.free, slot)
		}
	}
	return err
}

// LoadModule loads a PTX or cubin image in the worker. Simulator kernels cross by name only:
// a Go function of the parent cannot run in the worker, so the worker looks each name up in
// the kernels it was given (WithKernels), which the program registers in both processes under
// the same names; a name it lacks is refused.
func (d *Device) LoadModule(spec backend.ModuleSpec) (backend.Module, error) {
	if len(spec.Image)+64 > d.b.proc.MaxMessage() {
		return d.loadShared(spec)
	}
	m := mLoadModule
	if len(spec.SimKernels) > 0 || len(spec.SimGlobals) > 0 {
		m = mLoadModuleKernels
	}
	e := request(m)
	e.u64(uint64(spec.ImageKind))
	e.bytes(spec.Image)
	if m == mLoadModuleKernels {
		kernelNames(&e, spec.SimKernels)
		simGlobals(&e, spec.SimGlobals)
	}
	r, err := d.do(e)
	if err != nil {
		return 0, err
	}
	return backend.Module(r.u64()), nil
}

// kernelNames writes the names of a module's simulator kernels, sorted, so a request does not
// depend on map order.
func kernelNames(e *enc, kernels map[string]backend.SimKernel) {
	names := make([]string, 0, len(kernels))
	for n := range kernels {
		names = append(names, n)
	}
	slices.Sort(names)
	e.u64(uint64(len(names)))
	for _, n := range names {
		e.str(n)
	}
}

// simGlobals writes a module's simulator variables, sorted by name: unlike kernels they are
// data, so they cross whole.
func simGlobals(e *enc, globals map[string][]byte) {
	names := make([]string, 0, len(globals))
	for n := range globals {
		names = append(names, n)
	}
	slices.Sort(names)
	e.u64(uint64(len(names)))
	for _, n := range names {
		e.str(n)
		e.bytes(globals[n])
	}
}

// loadShared loads an image larger than a call carries: it goes in a memfd the worker maps
// and copies from.
func (d *Device) loadShared(spec backend.ModuleSpec) (backend.Module, error) {
	mem, f, err := newShared(uint64(len(spec.Image)))
	if err != nil {
		return 0, &cudaerr.Error{Op: "cudaLibraryLoadData", Code: cudaerr.MemoryAllocation,
			Message: fmt.Sprintf("a %d-byte module image for the worker: %v", len(spec.Image), err)}
	}
	copy(mem, spec.Image)
	e := request(mLoadModuleShared)
	e.u64(uint64(spec.ImageKind))
	e.i64(int64(os.Getpid()))
	e.u64(uint64(f.Fd()))
	e.u64(uint64(len(spec.Image)))
	kernelNames(&e, spec.SimKernels)
	simGlobals(&e, spec.SimGlobals)
	r, err := d.do(e)
	_ = f.Close()
	_ = unmapShared(mem)
	if err != nil {
		return 0, err
	}
	return backend.Module(r.u64()), nil
}

// MemRangeAttribute reads a range attribute of managed memory into out: out is written, so
// it crosses as its length and comes back as values (serveMemRangeAttribute).
func (d *Device) MemRangeAttribute(p backend.DevicePtr, n uint64, attr backend.RangeAttr, out []int32) error {
	e := request(mMemRangeAttribute)
	e.u64(uint64(p))
	e.u64(n)
	e.i64(int64(attr))
	e.u64(uint64(len(out)))
	r, err := d.do(e)
	if err != nil {
		return err
	}
	for i := range out {
		out[i] = int32(r.i64())
	}
	return r.err
}
