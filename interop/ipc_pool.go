package interop

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"sync/atomic"

	"github.com/gpuactor/gpuactor/alloc"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/device"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
)

// ExportPool exports pool, made with alloc.ExportAs(alloc.HandlePosixFD), as a new file
// descriptor, for ImportPool in another process (pass it with SendHandle); it returns once the
// descriptor exists. The caller owns the file and closes it once it has been sent: the pool
// does not depend on it. A pool made without that option is an ErrInvalidArgument error.
//
// Allocations of the pool are then shared one at a time: ExportPointer, ImportPointer.
func ExportPool(ctx context.Context, pool *alloc.Pool) (*os.File, error) {
	if pool == nil {
		return nil, core.Invalid("ExportPool of a nil pool")
	}
	fd := -1
	err := (*core.Pool)(pool).Do(ctx, func(rt backend.Device, h backend.MemPool) error {
		var err error
		if fd, err = rt.MemPoolExportFD(h); err != nil {
			if ipcIsInvalidValue(err) {
				return fmt.Errorf("%w: ExportPool: the pool was not made with alloc.ExportAs(alloc.HandlePosixFD): %w", core.ErrInvalidArgument, err)
			}
			return ipcError("ExportPool", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), "gpuactor-mempool"), nil
}

// ImportedPool is a memory pool another process exported, opened in this one: the source of
// the allocations ImportPointer maps. It cannot allocate (CUDA refuses new allocations from an
// imported pool). Its methods are safe for concurrent use.
type ImportedPool struct {
	dev    *device.Device
	h      backend.MemPool
	closed atomic.Bool
}

// ImportPool opens, on dev, the pool another process exported as f (from ExportPool, received
// with ReceiveHandle), and returns once it is open. f stays the caller's: close it when done
// (the pool does not need it). Close the pool with Close, or let dev's Close do it.
func ImportPool(ctx context.Context, dev *device.Device, f *os.File) (*ImportedPool, error) {
	if dev == nil {
		return nil, core.Invalid("ImportPool on a nil device")
	}
	if f == nil {
		return nil, core.Invalid("ImportPool of a nil file")
	}
	fd := int(f.Fd())
	if fd < 0 {
		return nil, core.Invalid("ImportPool of a closed file")
	}
	defer runtime.KeepAlive(f) // the descriptor must stay open until the runtime has read it
	return core.Make(ctx, (*core.Device)(dev), func(rt backend.Device, tr *core.Tracker) (*ImportedPool, error) {
		h, err := rt.MemPoolImportFD(fd)
		if err != nil {
			return nil, ipcError("ImportPool", err)
		}
		p := &ImportedPool{dev: dev, h: h}
		tr.Own(p, func() error { return p.destroy(rt) })
		return p, nil
	}, func(rt backend.Device, tr *core.Tracker, p *ImportedPool) {
		tr.Disown(p)
		_ = p.destroy(rt)
	})
}

// Device is the device the pool was imported on.
func (p *ImportedPool) Device() *device.Device { return p.dev }

// Close closes this process's side of the pool and returns once it is closed. Allocations
// imported from it stay usable until closed. Closing twice is an ErrClosed error.
func (p *ImportedPool) Close(ctx context.Context) error {
	if p == nil {
		return core.Invalid("Close of a nil imported pool")
	}
	return core.Do(ctx, (*core.Device)(p.dev), func(rt backend.Device, tr *core.Tracker) error {
		if p.closed.Load() {
			return core.Closed("imported pool closed twice")
		}
		tr.Disown(p)
		return p.destroy(rt)
	})
}

func (p *ImportedPool) destroy(rt backend.Device) error {
	p.closed.Store(true)
	return rt.MemPoolDestroy(p.h)
}

// ExportPointer returns the export data of buf, a whole buffer allocated from an exported pool
// (alloc.MallocAsync with alloc.FromPool), for ImportPointer in a process that imported the
// pool; it returns once the data is made, waiting for buf's allocation to run on its device's
// actor if it has not. The export takes nothing from buf: free it only once every importer
// has closed its import (and mind the allocation's stream order: an importer must not touch
// the memory before the allocation has run on the GPU).
func ExportPointer(ctx context.Context, buf device.Mem) (PoolPointer, error) {
	cd, err := core.Owner("exported buffer", buf)
	if err != nil {
		return PoolPointer{}, err
	}
	b, off, n := core.Region(buf)
	if off != 0 || n != b.Size() {
		return PoolPointer{}, core.Invalid("ExportPointer of bytes [%d, %d) of a %d-byte buffer: only a whole allocation can be exported", off, off+n, b.Size())
	}
	if k := b.Kind(); k != core.KindAsync {
		return PoolPointer{}, core.Invalid("ExportPointer of %s memory: only memory of an exported pool (alloc.MallocAsync with alloc.FromPool) can be exported", k)
	}
	if _, err := b.DevicePtr(ctx); err != nil { // a stream-ordered allocation's address, once known
		return PoolPointer{}, err
	}
	return core.Run(ctx, cd, func(rt backend.Device, _ *core.Tracker) (PoolPointer, error) {
		p, _, err := cd.Resolve("exported buffer", buf)
		if err != nil {
			return PoolPointer{}, err
		}
		d, err := rt.MemPoolExportPointer(p)
		return PoolPointer(d), ipcError("ExportPointer", err)
	}).Await(ctx)
}

// ImportPointer maps the allocation ptr names, of size bytes, from pool, and returns it as a
// buffer of the pool's device, usable like any other; it returns once it is mapped. The
// exporter's allocation must have run on its GPU before this process touches the memory (order
// it with an interprocess event). The buffer's Close (or the device's Close) releases the
// mapping in stream order (cudaFreeAsync on the device's own stream) after the work queued so
// far; the exporter must not free the allocation before that release has completed.
func ImportPointer(ctx context.Context, pool *ImportedPool, ptr PoolPointer, size uint64) (*device.Buffer, error) {
	if pool == nil {
		return nil, core.Invalid("ImportPointer from a nil pool")
	}
	if size == 0 {
		return nil, core.Invalid("ImportPointer of 0 bytes")
	}
	cd := (*core.Device)(pool.dev)
	return core.Make(ctx, cd, func(rt backend.Device, _ *core.Tracker) (*device.Buffer, error) {
		if pool.closed.Load() {
			return nil, core.Closed("imported pool used after Close")
		}
		p, err := rt.MemPoolImportPointer(pool.h, backend.IPCHandle(ptr))
		if err != nil {
			return nil, ipcError("ImportPointer", err)
		}
		if err := cd.Charge(core.KindImported, size); err != nil {
			return nil, err
		}
		b := new(device.Buffer)
		cd.Adopt((*core.Buffer)(b), p, size, core.KindImported, func(rt backend.Device, p cuda.DevicePtr, s backend.Stream) error {
			return rt.FreeAsync(p, s)
		})
		return b, nil
	}, func(_ backend.Device, _ *core.Tracker, b *device.Buffer) { _ = cd.FreeNow((*core.Buffer)(b)) })
}
