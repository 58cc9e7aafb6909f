package device

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.uber.org/zap"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
	"github.com/gpuactor/gpuactor/internal/cudart"
)

// Source is CUDA C++ device code to compile at run time with NVRTC. Kernels are looked up by
// their extern "C" names. Sim holds the kernels' Go implementations, which the simulator
// runs in their place; a kernel without one fails clearly there.
type Source struct {
	Name string // file name for diagnostics and the cache key, e.g. "saxpy.cu"
	Code string
	Sim  map[string]cuda.SimKernel
	// SimGlobals declares the code's __device__ and __constant__ variables for the simulator,
	// by name, with their initial bytes, whose length is the variable's size; kernels in Sim
	// read them with cuda.SimGlobal. The cuda backend ignores it: the compiled code defines
	// its variables.
	SimGlobals map[string][]byte
}

// CompileOption configures Compile.
type CompileOption func(*compileConfig)

type compileConfig struct{ options []string }

// ToolkitHeaders lets the source include the CUDA toolkit's headers that NVRTC does not carry
// itself, such as cooperative_groups.h and the CUDA C++ library's cuda/std/... and
// cuda/barrier: it adds the toolkit's include folder and its cccl folder, from $CUDA_HOME,
// $CUDA_PATH or /usr/local/cuda, the first that has cooperative_groups.h. Where no toolkit is
// found it adds nothing, and such an #include fails to compile naming the header.
func ToolkitHeaders() CompileOption {
	return func(c *compileConfig) { c.options = append(c.options, toolkitIncludes()...) }
}

// toolkitIncludes are the -I options of the first CUDA toolkit found, nil for none.
func toolkitIncludes() []string {
	for _, root := range []string{os.Getenv("CUDA_HOME"), os.Getenv("CUDA_PATH"), "/usr/local/cuda"} {
		if root == "" {
			continue
		}
		inc := filepath.Join(root, "include")
		if _, err := os.Stat(filepath.Join(inc, "cooperative_groups.h")); err != nil {
			continue
		}
		opts := []string{"-I" + inc}
		if cccl := filepath.Join(inc, "cccl"); isDir(cccl) {
			// CUDA 13 keeps libcu++ (cuda/std/...), which cooperative_groups.h includes, here.
			opts = append(opts, "-I"+cccl)
		}
		return opts
	}
	return nil
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// NVRTCOptions adds NVRTC command-line options, e.g. "-use_fast_math" or "-DN=4".
func NVRTCOptions(opts ...string) CompileOption {
	return func(c *compileConfig) { c.options = append(c.options, opts...) }
}

// Compile compiles src for this device's architecture with NVRTC and loads it; it returns
// once the module is loaded. Compiled code is cached on disk, keyed by source, options,
// architecture and NVRTC version. On the simulator, src is still compiled (to PTX) when NVRTC
// is installed, so syntax errors show up in tests; the kernels then run as their Go
// implementations. Compiling runs on the calling goroutine, never on the device's actor.
func (d *Device) Compile(ctx context.Context, src Source, opts ...CompileOption) (*Module, error) {
	if d == nil {
		return nil, core.Invalid("Compile on a nil device")
	}
	if strings.TrimSpace(src.Code) == "" {
		return nil, core.Invalid("Compile of empty source %q", src.Name)
	}
	if src.Name == "" {
		src.Name = "kernel.cu"
	}
	var cc compileConfig
	for _, o := range opts {
		o(&cc)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	image, kind, err := d.compileImage(src, cc.options)
	if err != nil {
		return nil, err
	}
	spec := backend.ModuleSpec{Image: image, ImageKind: backend.ImageKind(kind), SimKernels: src.Sim, SimGlobals: src.SimGlobals}
	m, err := core.LoadModule(ctx, d.core(), src.Name, spec, core.CUDASignatures(src.Code))
	return (*Module)(m), err
}

// compileImage runs on the caller's goroutine: NVRTC is thread-safe, and compiling must not
// hold up the device's actor.
func (d *Device) compileImage(src Source, options []string) ([]byte, ImageKind, error) {
	inf, log := d.info(), d.core().Log()
	nv, err := cudart.LoadNVRTC()
	if err != nil {
		if inf.kind == BackendSim {
			log.Debug("NVRTC not found: the simulator runs the Go kernels without compiling the source", zap.Error(err))
			return nil, 0, nil
		}
		return nil, 0, fmt.Errorf("gpuactor: compiling %s: %w", src.Name, err)
	}
	major, minor, err := nv.Version()
	if err != nil {
		return nil, 0, err
	}
	archs, err := nv.SupportedArchs()
	if err != nil {
		return nil, 0, err
	}
	arch, kind, err := pickArch(inf.props.ComputeCapability.Arch(), archs, inf.kind == BackendSim)
	if err != nil {
		return nil, 0, fmt.Errorf("gpuactor: compiling %s with NVRTC %d.%d: %w", src.Name, major, minor, err)
	}
	all := append(slices.Clone(options), "--gpu-architecture="+arch)
	cache := inf.cache
	key := cacheKey(src.Name, src.Code, all, arch, fmt.Sprintf("nvrtc %d.%d", major, minor))
	if image, ok := cache.get(key, kind); ok {
		return image, kind, nil
	}
	res, err := nv.Compile(src.Code, src.Name, all)
	if err != nil {
		var ce *cudart.CompileError
		if errors.As(err, &ce) {
			return nil, 0, &CompileError{Source: src.Name, Options: all, Log: ce.Log, Err: err}
		}
		return nil, 0, fmt.Errorf("gpuactor: compiling %s: %w", src.Name, err)
	}
	image := res.Cubin
	if kind == PTX {
		image = res.PTX
	}
	if err := cache.put(key, kind, image); err != nil {
		log.Warn("kernel cache write failed", zap.String("dir", inf.cacheDir), zap.Error(err))
	}
	return image, kind, nil
}

// pickArch chooses real code (sm_XY, a cubin) when NVRTC supports the device's architecture,
// else the newest virtual architecture below it (compute_XY, PTX the driver compiles). The
// simulator only needs the source checked, so it always takes PTX.
func pickArch(want int, supported []int, ptxOnly bool) (string, ImageKind, error) {
	if !ptxOnly && slices.Contains(supported, want) {
		return fmt.Sprintf("sm_%d", want), Cubin, nil
	}
	best := 0
	for _, a := range supported {
		if a <= want && a > best {
			best = a
		}
	}
	if best == 0 {
		return "", 0, fmt.Errorf("no supported architecture at or below %d (NVRTC supports %v)", want, supported)
	}
	return fmt.Sprintf("compute_%d", best), PTX, nil
}
