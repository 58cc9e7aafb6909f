package remote

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// The worker's hand-written calls: the methods the generated table (serve_gen.go) cannot
// serve from the backend contract alone, each named serveX for the method id mX. Those that
// name host memory shared with the parent (hostmem.go) map the parent's memfd, register it,
// and check every address the parent sends against the worker's own table of those
// mappings, so a wrong address is refused rather than dereferenced.

// serveInfo answers what the parent asks of the backend before any device is open.
func (s *server) serveInfo(in *dec, out *enc) error { return s.info(in, out) }

// serveOpen opens the worker's one device.
func (s *server) serveOpen(in *dec, out *enc) error { return s.open(in) }

// serveLoadModule loads an image carried in the call; simulator kernels cross by name
// (serveLoadModuleKernels).
func (s *server) serveLoadModule(in *dec, out *enc) error {
	kind := backend.ImageKind(in.u64())
	img := in.clone() // the request's bytes are reused, and a backend may keep the image
	if in.err != nil {
		return in.err
	}
	m, err := s.dev.LoadModule(backend.ModuleSpec{ImageKind: kind, Image: img})
	out.u64(uint64(m))
	return err
}

// serveMemRangeAttribute reads an attribute into as many values as the parent's out holds.
func (s *server) serveMemRangeAttribute(in *dec, out *enc) error {
	p, n, attr, k := backend.DevicePtr(in.u64()), in.u64(), backend.RangeAttr(in.i64()), in.u64()
	if in.err != nil {
		return in.err
	}
	if k > 1<<16 {
		return &cudaerr.Error{Op: "cudaMemRangeGetAttribute", Code: cudaerr.InvalidValue, Message: "output of more than 65536 values"}
	}
	vals := make([]int32, k)
	err := s.dev.MemRangeAttribute(p, n, attr, vals)
	for _, v := range vals {
		out.i64(int64(v))
	}
	return err
}

// serveHostAlloc maps the parent's memfd and registers it with the device (HostAlloc).
func (s *server) serveHostAlloc(in *dec, out *enc) error {
	pid, fd, size, flags := in.int(), in.u64(), in.u64(), in.u32()
	if in.err != nil {
		return in.err
	}
	mem, err := mapPeer(pid, fd, size)
	if err != nil {
		return &cudaerr.Error{Op: "cudaHostAlloc", Code: cudaerr.MemoryAllocation, Message: err.Error()}
	}
	reg := &region{mem: mem}
	// HostAlloc's portable and mapped flags have HostRegister's values. The registration is
	// mapped whatever the flags: under unified addressing all HostAlloc memory is, so
	// HostDevicePointer answers for it as it does in process.
	if err := s.dev.HostRegister(reg.at(0), size, flags&backend.HostAllocPortable|backend.HostRegisterMapped); err != nil {
		_ = unmapShared(mem)
		return err
	}
	s.host.add(reg)
	out.u64(uint64(reg.base()))
	return nil
}

// serveHostFree unregisters and unmaps memory of serveHostAlloc.
func (s *server) serveHostFree(in *dec, out *enc) error {
	base := in.u64()
	if in.err != nil {
		return in.err
	}
	reg := s.host.remove(uintptr(base))
	if reg == nil {
		return &cudaerr.Error{Op: "cudaFreeHost", Code: cudaerr.InvalidValue, Message: fmt.Sprintf("%#x is not shared memory of this worker", base)}
	}
	err := s.dev.HostUnregister(reg.at(0))
	_ = unmapShared(reg.mem)
	return err
}

// serveCopyHtoD copies from memory shared with the parent, checked against the worker's
// table of it.
func (s *server) serveCopyHtoD(in *dec, out *enc) error {
	dst, src, n, st := backend.DevicePtr(in.u64()), in.u64(), in.u64(), backend.Stream(in.u64())
	reg, off, err := s.shared("cudaMemcpyAsync", src, n)
	if err != nil || in.err != nil {
		return firstErr(in.err, err)
	}
	return s.dev.CopyHtoD(dst, reg.at(off), n, st)
}

// serveCopyDtoH copies to memory shared with the parent, checked against the worker's
// table of it.
func (s *server) serveCopyDtoH(in *dec, out *enc) error {
	dst, src, n, st := in.u64(), backend.DevicePtr(in.u64()), in.u64(), backend.Stream(in.u64())
	reg, off, err := s.shared("cudaMemcpyAsync", dst, n)
	if err != nil || in.err != nil {
		return firstErr(in.err, err)
	}
	return s.dev.CopyDtoH(reg.at(off), src, n, st)
}

// serveHostDevicePointer is the device address of mapped memory shared with the parent.
func (s *server) serveHostDevicePointer(in *dec, out *enc) error {
	p := in.u64()
	reg, off, err := s.shared("cudaHostGetDevicePointer", p, 0)
	if err != nil || in.err != nil {
		return firstErr(in.err, err)
	}
	dp, err := s.dev.HostDevicePointer(reg.at(off))
	out.u64(uint64(dp))
	return err
}

// serveGraphAddCopyHtoD adds a copy node from memory shared with the parent.
func (s *server) serveGraphAddCopyHtoD(in *dec, out *enc) error {
	g, deps, dst, src, n := backend.Graph(in.u64()), decListGraphNode(in), backend.DevicePtr(in.u64()), in.u64(), in.u64()
	reg, off, err := s.shared("cudaGraphAddMemcpyNode", src, n)
	if err != nil || in.err != nil {
		return firstErr(in.err, err)
	}
	node, err := s.dev.GraphAddCopyHtoD(g, deps, dst, reg.at(off), n)
	out.u64(uint64(node))
	return err
}

// serveGraphAddCopyDtoH adds a copy node to memory shared with the parent.
func (s *server) serveGraphAddCopyDtoH(in *dec, out *enc) error {
	g, deps, dst, src, n := backend.Graph(in.u64()), decListGraphNode(in), in.u64(), backend.DevicePtr(in.u64()), in.u64()
	reg, off, err := s.shared("cudaGraphAddMemcpyNode", dst, n)
	if err != nil || in.err != nil {
		return firstErr(in.err, err)
	}
	node, err := s.dev.GraphAddCopyDtoH(g, deps, reg.at(off), src, n)
	out.u64(uint64(node))
	return err
}

// serveLoadModuleShared loads an image too large for a call, passed in a memfd.
func (s *server) serveLoadModuleShared(in *dec, out *enc) error {
	kind, pid, fd, size := backend.ImageKind(in.u64()), in.int(), in.u64(), in.u64()
	if in.err != nil {
		return in.err
	}
	mem, err := mapPeer(pid, fd, size)
	if err != nil {
		return &cudaerr.Error{Op: "cudaLibraryLoadData", Code: cudaerr.MemoryAllocation, Message: "the module image: " + err.Error()}
	}
	img := append([]byte(nil), mem...)
	_ = unmapShared(mem)
	kernels, err := s.resolveKernels(in)
	globals := readSimGlobals(in)
	if err != nil || in.err != nil {
		return firstErr(in.err, err)
	}
	mod, err := s.dev.LoadModule(backend.ModuleSpec{ImageKind: kind, Image: img, SimKernels: kernels, SimGlobals: globals})
	out.u64(uint64(mod))
	return err
}

// serveBoard maps the event board's memory (board.go).
func (s *server) serveBoard(in *dec, out *enc) error {
	pid, fd, size := in.int(), in.u64(), in.u64()
	if in.err != nil {
		return in.err
	}
	if size != boardSize {
		return fmt.Errorf("remote: an event board of %d bytes, want %d", size, boardSize)
	}
	mem, err := mapPeer(pid, fd, size)
	if err != nil {
		return &cudaerr.Error{Op: "remote", Code: cudaerr.MemoryAllocation, Message: "the event board: " + err.Error()}
	}
	s.board = newServerBoard(mem)
	return nil
}

// serveLoadModuleKernels loads a module whose simulator kernels are named for the worker's
// registry (WithKernels).
func (s *server) serveLoadModuleKernels(in *dec, out *enc) error {
	kind := backend.ImageKind(in.u64())
	// The image is a view into the request ring's buffer: copy it, as a backend may keep it.
	img := in.clone()
	kernels, err := s.resolveKernels(in)
	globals := readSimGlobals(in)
	if err != nil || in.err != nil {
		return firstErr(in.err, err)
	}
	mod, err := s.dev.LoadModule(backend.ModuleSpec{ImageKind: kind, Image: img, SimKernels: kernels, SimGlobals: globals})
	out.u64(uint64(mod))
	return err
}

// readSimGlobals reads a module's simulator variables (simGlobals); nil when it has none.
func readSimGlobals(in *dec) map[string][]byte {
	n := in.count(16)
	if n == 0 || in.err != nil {
		return nil
	}
	globals := make(map[string][]byte, n)
	for range n {
		name := in.str()
		globals[name] = in.clone()
	}
	return globals
}

// resolveKernels reads a module's kernel names and finds each in the worker's registry
// (WithKernels); nil when the module names none.
func (s *server) resolveKernels(in *dec) (map[string]backend.SimKernel, error) {
	n := in.count(8)
	if n == 0 || in.err != nil {
		return nil, nil
	}
	kernels := make(map[string]backend.SimKernel, n)
	var missing []string
	for range n {
		name := in.str()
		fn, ok := s.kernels[name]
		if !ok {
			missing = append(missing, strconv.Quote(name))
			continue
		}
		kernels[name] = fn
	}
	if len(missing) > 0 {
		return nil, &cudaerr.Error{Op: "cudaLibraryLoadData", Code: cudaerr.SymbolNotFound,
			Message: fmt.Sprintf("simulator kernel(s) %s not registered in the worker: a worker runs the kernels its program registered by name, not the parent's functions", strings.Join(missing, ", "))}
	}
	return kernels, nil
}

// shared finds n bytes at the worker's address p in the memory shared with the parent.
func (s *server) shared(op string, p, n uint64) (*region, uint64, error) {
	reg, off, ok := s.host.find(uintptr(p), n)
	if !ok {
		return nil, 0, &cudaerr.Error{Op: op, Code: cudaerr.InvalidValue,
			Message: fmt.Sprintf("%d bytes at %#x are not inside host memory shared with the parent", n, p)}
	}
	return reg, off, nil
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
