package cudart

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	"github.com/gpuactor/gpuactor/cudaerr"
)

// KernelArgs builds the void** parameter array a launch takes: one pointer per kernel parameter,
// each pointing at that parameter's bytes. Every parameter gets its own 8-byte little-endian
// word, so 4-byte parameters are the word's low half. The runtime copies the values at launch,
// so a KernelArgs can be Reset and reused as soon as the launch call returns. The zero value is
// ready to use; it is not safe for concurrent use.
type KernelArgs struct {
	words []uint64
	ptrs  []unsafe.Pointer
}

// Reset empties the list, keeping its storage.
func (a *KernelArgs) Reset() { a.words = a.words[:0] }

// Add appends one parameter given by its bits (IEEE bits for floats, the address for pointers).
func (a *KernelArgs) Add(bits uint64) { a.words = append(a.words, bits) }

// Len is the number of parameters.
func (a *KernelArgs) Len() int { return len(a.words) }

// Pointers is the parameter array, valid until the next Add or Reset; nil when empty. The
// pointers are built here, after the last Add, since Add may move the words.
func (a *KernelArgs) Pointers() []unsafe.Pointer {
	if len(a.words) == 0 {
		return nil
	}
	if cap(a.ptrs) < len(a.words) {
		a.ptrs = make([]unsafe.Pointer, len(a.words), cap(a.words))
	}
	a.ptrs = a.ptrs[:len(a.words)]
	for i := range a.words {
		a.ptrs[i] = unsafe.Pointer(&a.words[i])
	}
	return a.ptrs
}

// LaunchKernel enqueues k on s with grid × block threads, sharedMem bytes of dynamic shared
// memory and the parameter array args (see KernelArgs):
//
//   - with k.Func set (every DriverAPI kernel, and LibraryAPI kernels whose CUfunction the
//     driver gave): cuLaunchKernel(k.Func, gx, gy, gz, bx, by, bz, sharedMem, s, args, nil),
//     11 scalars — the cheaper path from Go;
//   - else LibraryAPI: cudaLaunchKernel(k, grid, block, args, sharedMem, s), each dim3 passed by
//     value as two integer registers: x|y<<32 and z (System V classification of a 12-byte struct).
//
// The runtime copies the parameters during the call; args is kept alive until it returns.
//
// A shape outside CUDA's launch limits (a zero dimension, more than 1024 threads a block, a block
// deeper than 64, a grid above 2³¹-1 × 65535 × 65535) fails with cudaerr.InvalidConfiguration
// whichever path k came from: cudaLaunchKernel reports it so for kernels linked into the program,
// but as cudaErrorInvalidValue for a cudaKernel_t (seen on 13.0), and cuLaunchKernel as
// CUDA_ERROR_INVALID_VALUE; those are relabelled. The check runs only once the call has failed.
func (r *Runtime) LaunchKernel(k Kernel, grid, block Dim3, sharedMem uint32, s Stream, args []unsafe.Pointer) error {
	f := getFrame()
	err := r.launch(f, k, grid, block, sharedMem, s, uintptr(unsafe.Pointer(unsafe.SliceData(args))))
	putFrame(f)
	runtime.KeepAlive(args)
	return err
}

// launch is LaunchKernel on a caller-provided frame; argv is the parameter array's address,
// converted in the call expression so that it stays alive and in place for the call.
//
//go:uintptrescapes
func (r *Runtime) launch(f *callFrame, k Kernel, grid, block Dim3, sharedMem uint32, s Stream, argv uintptr) error {
	var err error
	switch {
	case k.Func != 0:
		f.w[0] = k.Func
		f.w[1], f.w[2], f.w[3] = uintptr(grid.X), uintptr(grid.Y), uintptr(grid.Z)
		f.w[4], f.w[5], f.w[6] = uintptr(block.X), uintptr(block.Y), uintptr(block.Z)
		f.w[7], f.w[8], f.w[9], f.w[10] = uintptr(sharedMem), uintptr(s), argv, 0
		err = r.invokeDriver(drvLaunchKernel, f)
	case k.API == LibraryAPI:
		f.w[0] = k.Handle
		f.w[1], f.w[2] = uintptr(grid.X)|uintptr(grid.Y)<<32, uintptr(grid.Z) // dim3 by value: 2 words
		f.w[3], f.w[4] = uintptr(block.X)|uintptr(block.Y)<<32, uintptr(block.Z)
		f.w[5], f.w[6], f.w[7] = argv, uintptr(sharedMem), uintptr(s) // R9, then the stack
		err = r.invokeErr(fnLaunchKernel, f)
	default:
		return r.newError("cudaLaunchKernel", codeInvalidResourceHandle)
	}
	if err != nil && errors.Is(err, cudaerr.InvalidValue) && !validShape(grid, block) {
		return r.configError(err, grid, block)
	}
	return err
}

// validShape checks a launch shape against the limits every CUDA device shares.
func validShape(grid, block Dim3) bool {
	switch {
	case grid.X == 0 || grid.Y == 0 || grid.Z == 0 || block.X == 0 || block.Y == 0 || block.Z == 0:
		return false
	case grid.X > 1<<31-1 || grid.Y > 65535 || grid.Z > 65535:
		return false
	case block.X > 1024 || block.Y > 1024 || block.Z > 64 || block.Count() > 1024:
		return false
	}
	return true
}

// configError relabels a launch's InvalidValue as InvalidConfiguration, keeping the call's name.
func (r *Runtime) configError(err error, grid, block Dim3) error {
	op := "cudaLaunchKernel"
	var ce *cudaerr.Error
	if errors.As(err, &ce) {
		op = ce.Op
	}
	return &cudaerr.Error{Op: op, Code: cudaerr.InvalidConfiguration,
		Message: fmt.Sprintf("%s: grid (%d,%d,%d) block (%d,%d,%d)", r.errorString(int32(cudaerr.InvalidConfiguration)),
			grid.X, grid.Y, grid.Z, block.X, block.Y, block.Z)}
}
