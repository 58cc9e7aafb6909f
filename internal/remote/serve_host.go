package remote

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// hostCall serves the methods that name host memory shared with the parent (hostmem.go): the
// worker maps the parent's memfd, registers it, and checks every address the parent sends
// against its own table of those mappings, so a wrong address is refused rather than
// dereferenced.
func (s *server) hostCall(m method, in *dec, out *enc) error {
	switch m {
	case mHostAlloc:
		pid, fd, size, flags := in.int(), in.u64(), in.u64(), in.u32()
		if in.err != nil {
			return in.err
		}
		mem, err := mapPeer(pid, fd, size)
		if err != nil {
			return &cudaerr.Error{Op: "cudaHostAlloc", Code: cudaerr.MemoryAllocation, Message: err.Error()}
		}
		reg := &region{mem: mem}
		// HostAlloc's portable and mapped flags have HostRegister's values.
		if err := s.dev.HostRegister(reg.at(0), size, flags&(backend.HostAllocPortable|backend.HostAllocMapped)); err != nil {
			_ = unmapShared(mem)
			return err
		}
		s.host.add(reg)
		out.u64(uint64(reg.base()))
		return nil
	case mHostFree:
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
	case mCopyHtoD:
		dst, src, n, st := p2(in), in.u64(), in.u64(), s2(in)
		reg, off, err := s.shared("cudaMemcpyAsync", src, n)
		if err != nil || in.err != nil {
			return firstErr(in.err, err)
		}
		return s.dev.CopyHtoD(dst, reg.at(off), n, st)
	case mCopyDtoH:
		dst, src, n, st := in.u64(), p2(in), in.u64(), s2(in)
		reg, off, err := s.shared("cudaMemcpyAsync", dst, n)
		if err != nil || in.err != nil {
			return firstErr(in.err, err)
		}
		return s.dev.CopyDtoH(reg.at(off), src, n, st)
	case mHostDevicePointer:
		p := in.u64()
		reg, off, err := s.shared("cudaHostGetDevicePointer", p, 0)
		if err != nil || in.err != nil {
			return firstErr(in.err, err)
		}
		dp, err := s.dev.HostDevicePointer(reg.at(off))
		out.u64(uint64(dp))
		return err
	case mGraphAddCopyHtoD:
		g, deps, dst, src, n := g2(in), in.nodes(), p2(in), in.u64(), in.u64()
		reg, off, err := s.shared("cudaGraphAddMemcpyNode", src, n)
		if err != nil || in.err != nil {
			return firstErr(in.err, err)
		}
		node, err := s.dev.GraphAddCopyHtoD(g, deps, dst, reg.at(off), n)
		out.u64(uint64(node))
		return err
	case mGraphAddCopyDtoH:
		g, deps, dst, src, n := g2(in), in.nodes(), in.u64(), p2(in), in.u64()
		reg, off, err := s.shared("cudaGraphAddMemcpyNode", dst, n)
		if err != nil || in.err != nil {
			return firstErr(in.err, err)
		}
		node, err := s.dev.GraphAddCopyDtoH(g, deps, reg.at(off), src, n)
		out.u64(uint64(node))
		return err
	case mLoadModuleShared:
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
		if err != nil || in.err != nil {
			return firstErr(in.err, err)
		}
		mod, err := s.dev.LoadModule(backend.ModuleSpec{ImageKind: kind, Image: img, SimKernels: kernels})
		out.u64(uint64(mod))
		return err
	case mBoard:
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
	case mLoadModuleKernels:
		kind := backend.ImageKind(in.u64())
		// The image is a view into the request ring's buffer: copy it, as a backend may keep it.
		img := append([]byte(nil), in.bytes()...)
		kernels, err := s.resolveKernels(in)
		if err != nil || in.err != nil {
			return firstErr(in.err, err)
		}
		mod, err := s.dev.LoadModule(backend.ModuleSpec{ImageKind: kind, Image: img, SimKernels: kernels})
		out.u64(uint64(mod))
		return err
	}
	return fmt.Errorf("remote: method %d is not a host-memory method", m)
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
