package device

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// Module is loaded device code: compiled from source, or loaded from PTX or cubin bytes.
type Module struct {
	dev      *Device
	name     string
	h        backend.Module
	sigs     map[string][]param
	unloaded atomic.Bool

	mu      sync.Mutex
	kernels map[string]*Kernel
}

// Kernel is a launchable function of a Module.
type Kernel struct {
	mod    *Module
	name   string
	h      backend.Kernel
	params []param // nil: unknown, arguments are not checked
}

// Config is a launch's shape.
type Config struct {
	Grid      Dim3   // blocks
	Block     Dim3   // threads per block
	SharedMem uint32 // dynamic shared memory per block, in bytes
}

// Name is the kernel's name.
func (k *Kernel) Name() string { return k.name }

// Module is the module the kernel belongs to.
func (k *Kernel) Module() *Module { return k.mod }

// Params lists the kernel's parameter kinds as gpuactor checks them, or nil when they are
// unknown (a cubin without source, or a parameter type other than a scalar or a pointer).
func (k *Kernel) Params() []ArgKind {
	if k.params == nil {
		return nil
	}
	out := make([]ArgKind, len(k.params))
	for i, p := range k.params {
		out[i] = p.kind
	}
	return out
}

// Name is the module's source name.
func (m *Module) Name() string { return m.name }

// ImageKind says what bytes LoadModule is given.
type ImageKind = backend.ImageKind

// Module image kinds.
const (
	PTX   = backend.ImagePTX
	Cubin = backend.ImageCubin
)

// LoadModule loads compiled device code. For PTX the kernels' parameters are read from the
// PTX and checked at launch; for a cubin they are not known and not checked. sim supplies the
// kernels' Go implementations for the simulator (ignored by the cuda backend).
func (d *Device) LoadModule(ctx context.Context, name string, image []byte, kind ImageKind, sim map[string]SimKernel) (*Module, error) {
	if len(image) == 0 && d.kind != BackendSim {
		return nil, invalid("LoadModule of an empty image")
	}
	var sigs map[string][]param
	if kind == PTX {
		sigs = ptxSignatures(string(image))
	}
	return d.load(ctx, name, backend.ModuleSpec{Image: image, ImageKind: kind, SimKernels: sim}, sigs)
}

func (d *Device) load(ctx context.Context, name string, spec backend.ModuleSpec, sigs map[string][]param) (*Module, error) {
	return call(ctx, d, func() (*Module, error) {
		h, err := d.dev.LoadModule(spec)
		if err != nil {
			return nil, fmt.Errorf("gpuactor: loading module %s: %w", name, err)
		}
		m := &Module{dev: d, name: name, h: h, sigs: sigs, kernels: map[string]*Kernel{}}
		d.live.modules[m] = struct{}{}
		return m, nil
	}).Await(ctx)
}

// Kernel looks up a kernel by its extern "C" name.
func (m *Module) Kernel(ctx context.Context, name string) (*Kernel, error) {
	m.mu.Lock()
	k, ok := m.kernels[name]
	m.mu.Unlock()
	if ok {
		return k, nil
	}
	k, err := call(ctx, m.dev, func() (*Kernel, error) {
		if m.unloaded.Load() {
			return nil, freedErr("module %s was unloaded", m.name)
		}
		h, err := m.dev.dev.ModuleKernel(m.h, name)
		if err != nil {
			return nil, fmt.Errorf("%w: %q in module %s on the %s backend: %w", ErrNoKernel, name, m.name, m.dev.kind, err)
		}
		return &Kernel{mod: m, name: name, h: h, params: m.sigs[name]}, nil
	}).Await(ctx)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if prev, ok := m.kernels[name]; ok {
		return prev, nil
	}
	m.kernels[name] = k
	return k, nil
}

// Unload unloads the module; its kernels can no longer be launched.
func (m *Module) Unload(ctx context.Context) error {
	return do(ctx, m.dev, func() error { return m.dev.unload(m) })
}

// unload runs on the actor thread.
func (d *Device) unload(m *Module) error {
	if m.unloaded.Load() {
		return freedErr("module %s unloaded twice", m.name)
	}
	if err := d.dev.StreamSynchronize(d.stream); err != nil {
		return err
	}
	m.unloaded.Store(true)
	delete(d.live.modules, m)
	return d.dev.UnloadModule(m.h)
}

// Launch enqueues k on the device and returns once it is queued; its errors at run time
// surface at the next synchronizing call. args are int32, uint32, int64, uint64, float32,
// float64, *Buffer, Slice or DevicePtr values; a Go int or uint is accepted where the
// kernel's parameter is a known integer type it fits.
func (d *Device) Launch(ctx context.Context, k *Kernel, cfg Config, args ...any) error {
	_, err := d.LaunchAsync(ctx, k, cfg, args...).Await(ctx)
	return err
}

// LaunchAsync is Launch without waiting: the future completes once the kernel is queued.
func (d *Device) LaunchAsync(ctx context.Context, k *Kernel, cfg Config, args ...any) *actor.Future[struct{}] {
	return d.launch(ctx, k, cfg, false, args)
}

// LaunchSync launches k and waits until it has finished running on the device.
func (d *Device) LaunchSync(ctx context.Context, k *Kernel, cfg Config, args ...any) error {
	_, err := d.launch(ctx, k, cfg, true, args).Await(ctx)
	return err
}

func (d *Device) launch(ctx context.Context, k *Kernel, cfg Config, wait bool, args []any) *actor.Future[struct{}] {
	packed, mems, err := d.prepareLaunch(k, cfg, args)
	if err != nil {
		return actor.Completed(struct{}{}, err)
	}
	return call(ctx, d, func() (struct{}, error) {
		return struct{}{}, d.runLaunch(k, cfg, wait, packed, mems)
	})
}

// runLaunch runs on the actor thread.
func (d *Device) runLaunch(k *Kernel, cfg Config, wait bool, packed []backend.Arg, mems []memArg) error {
	if err := d.enqueueLaunch(k, cfg, packed, mems, d.stream); err != nil {
		return err
	}
	if wait {
		if err := d.dev.StreamSynchronize(d.stream); err != nil {
			return fmt.Errorf("gpuactor: running %s: %w", k.name, err)
		}
	}
	return nil
}

// enqueueLaunch launches a prepared kernel on stream s; on the actor thread.
func (d *Device) enqueueLaunch(k *Kernel, cfg Config, packed []backend.Arg, mems []memArg, s backend.Stream) error {
	if err := resolveArgs(k, packed, mems); err != nil {
		return err
	}
	if err := d.dev.Launch(k.h, cfg.Grid, cfg.Block, cfg.SharedMem, s, packed); err != nil {
		return fmt.Errorf("gpuactor: launching %s: %w", k.name, err)
	}
	return nil
}

// memArg is a kernel argument that is device memory: packed[arg] gets the buffer's address
// plus off on the actor thread (resolveArgs), where the address of a stream-ordered allocation
// is known by the time any launch that uses it runs.
type memArg struct {
	b   *Buffer
	off uint64
	arg int
}

// resolveArgs refuses an unloaded module and buffers freed since the launch was prepared (or
// whose allocation failed), and writes the buffers' addresses into packed. On the actor thread.
func resolveArgs(k *Kernel, packed []backend.Arg, mems []memArg) error {
	if k.mod.unloaded.Load() {
		return freedErr("kernel %s: module %s was unloaded", k.name, k.mod.name)
	}
	for _, m := range mems {
		if !m.b.ok() {
			return m.b.usable(fmt.Sprintf("kernel %s argument %d", k.name, m.arg))
		}
		// Written only when it changes: a spec may be resolved more than once, and a backend
		// may keep the slice it was given (a graph node), whose readers a write of the same
		// value would still race.
		if bits := uint64(m.b.ptr) + m.off; packed[m.arg].Bits != bits {
			packed[m.arg].Bits = bits
		}
	}
	return nil
}

// prepareLaunch checks the shape and arguments on the caller's goroutine, off the actor thread.
// Memory arguments are checked for their device and range here; their addresses are filled in
// on the actor thread (resolveArgs).
func (d *Device) prepareLaunch(k *Kernel, cfg Config, args []any) ([]backend.Arg, []memArg, error) {
	if k == nil {
		return nil, nil, invalid("launch of a nil kernel")
	}
	if k.mod.dev != d {
		return nil, nil, fmt.Errorf("%w: kernel %s was loaded on device %d, launched on device %d", ErrWrongDevice, k.name, k.mod.dev.ordinal, d.ordinal)
	}
	if err := d.checkConfig(k, cfg); err != nil {
		return nil, nil, err
	}
	return d.packArgs(k, args)
}

func (d *Device) checkConfig(k *Kernel, cfg Config) error {
	p := &d.props
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: kernel %s: "+format, append([]any{ErrLaunchConfig, k.name}, a...)...)
	}
	g, b := cfg.Grid, cfg.Block
	if g.X == 0 || g.Y == 0 || g.Z == 0 || b.X == 0 || b.Y == 0 || b.Z == 0 {
		return bad("grid %v and block %v must have no zero extent (use device.Dim)", g, b)
	}
	if b.X > p.MaxBlock.X || b.Y > p.MaxBlock.Y || b.Z > p.MaxBlock.Z {
		return bad("block %v exceeds the device's maximum block %v", b, p.MaxBlock)
	}
	if b.Count() > uint64(p.MaxThreadsPerBlock) {
		return bad("block %v has %d threads, the device allows %d", b, b.Count(), p.MaxThreadsPerBlock)
	}
	if g.X > p.MaxGrid.X || g.Y > p.MaxGrid.Y || g.Z > p.MaxGrid.Z {
		return bad("grid %v exceeds the device's maximum grid %v", g, p.MaxGrid)
	}
	if limit := max(p.SharedMemPerBlock, p.SharedMemPerBlockOptin); int(cfg.SharedMem) > limit {
		return bad("%d bytes of dynamic shared memory, the device allows %d per block", cfg.SharedMem, limit)
	}
	return nil
}

func (d *Device) packArgs(k *Kernel, args []any) ([]backend.Arg, []memArg, error) {
	if k.params != nil && len(args) != len(k.params) {
		return nil, nil, fmt.Errorf("%w: kernel %s takes %d argument(s) (%s), got %d", ErrKernelArgs, k.name, len(k.params), paramList(k.params), len(args))
	}
	if len(args) == 0 {
		return nil, nil, nil
	}
	packed := make([]backend.Arg, len(args))
	var mems []memArg
	for i, a := range args {
		var want *param
		if k.params != nil {
			want = &k.params[i]
		}
		arg, buf, off, err := d.packArg(k, i, a, want)
		if err != nil {
			return nil, nil, err
		}
		if buf != nil {
			if mems == nil {
				mems = make([]memArg, 0, len(args)-i) // one allocation: at most the rest are memory
			}
			mems = append(mems, memArg{b: buf, off: off, arg: i})
		}
		if want != nil && !want.accepts(arg.Kind) {
			return nil, nil, fmt.Errorf("%w: kernel %s argument %d is %s, got %s (%T)", ErrKernelArgs, k.name, i, want, arg.Kind, a)
		}
		packed[i] = arg
	}
	return packed, mems, nil
}

// packArg packs argument i; for device memory it returns the buffer and the offset into it,
// whose address resolveArgs adds on the actor thread.
func (d *Device) packArg(k *Kernel, i int, a any, want *param) (backend.Arg, *Buffer, uint64, error) {
	switch v := a.(type) {
	case int32:
		return backend.Arg{Kind: Int32, Bits: uint64(uint32(v))}, nil, 0, nil
	case uint32:
		return backend.Arg{Kind: Uint32, Bits: uint64(v)}, nil, 0, nil
	case int64:
		return backend.Arg{Kind: Int64, Bits: uint64(v)}, nil, 0, nil
	case uint64:
		return backend.Arg{Kind: Uint64, Bits: v}, nil, 0, nil
	case float32:
		return backend.Arg{Kind: Float32, Bits: uint64(math.Float32bits(v))}, nil, 0, nil
	case float64:
		return backend.Arg{Kind: Float64, Bits: math.Float64bits(v)}, nil, 0, nil
	case DevicePtr:
		return backend.Arg{Kind: Pointer, Bits: uint64(v)}, nil, 0, nil
	case Mem: // *Buffer, Slice, or a domain package's type built on *Buffer (alloc.Buffer)
		b, off, n := regionOf(v)
		if b == nil {
			return backend.Arg{}, nil, 0, fmt.Errorf("%w: kernel %s argument %d is a nil buffer", ErrKernelArgs, k.name, i)
		}
		if b.dev != d {
			return backend.Arg{}, nil, 0, fmt.Errorf("%w: kernel %s argument %d lives on device %d, launched on device %d", ErrWrongDevice, k.name, i, b.dev.ordinal, d.ordinal)
		}
		if off > b.size || n > b.size-off {
			return backend.Arg{}, nil, 0, outOfRange("kernel %s argument %d: slice [%d, %d) runs past its %d-byte buffer", k.name, i, off, off+n, b.size)
		}
		return backend.Arg{Kind: Pointer}, b, off, nil
	case int, uint:
		arg, err := goInt(k, i, v, want)
		return arg, nil, 0, err
	}
	return backend.Arg{}, nil, 0, fmt.Errorf("%w: kernel %s argument %d has unsupported Go type %T (use int32, uint32, int64, uint64, float32, float64, *Buffer, Slice or DevicePtr)", ErrKernelArgs, k.name, i, a)
}

// goInt fits a Go int or uint to the kernel's declared integer parameter.
func goInt(k *Kernel, i int, v any, want *param) (backend.Arg, error) {
	if want == nil {
		return backend.Arg{}, fmt.Errorf("%w: kernel %s argument %d is a Go %T, whose width the kernel's unknown signature cannot settle: pass int32 or int64", ErrKernelArgs, k.name, i, v)
	}
	var s int64
	var u uint64
	var neg bool
	switch x := v.(type) {
	case int:
		s, u, neg = int64(x), uint64(x), x < 0
	case uint:
		s, u = int64(x), uint64(x)
	}
	fits := false
	switch want.kind {
	case Int32:
		fits = s >= math.MinInt32 && s <= math.MaxInt32 && (neg || u <= math.MaxInt32)
	case Uint32:
		fits = !neg && u <= math.MaxUint32
	case Int64:
		fits = neg || u <= math.MaxInt64
	case Uint64:
		fits = !neg
	}
	if !fits {
		return backend.Arg{}, fmt.Errorf("%w: kernel %s argument %d is %s, got Go %T %v that does not fit", ErrKernelArgs, k.name, i, want, v, v)
	}
	return backend.Arg{Kind: want.kind, Bits: u}, nil
}

func paramList(ps []param) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return strings.Join(s, ", ")
}
