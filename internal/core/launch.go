package core

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/gpuactor/gpuactor/actor"
	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/internal/backend"
)

// LaunchSpec is a checked launch, ready to queue on any stream of its device or to become a
// graph node.
type LaunchSpec struct {
	k    *Kernel
	cfg  cuda.LaunchConfig
	args []backend.Arg
	mems []memArg // the memory arguments, resolved on the actor thread
}

// memArg is a kernel argument that is device memory: args[arg] gets the buffer's address plus
// off on the actor thread (resolve), where the address of a stream-ordered allocation is known
// by the time any launch that uses it runs.
type memArg struct {
	b   *Buffer
	off uint64
	arg int
}

// Kernel is the kernel the spec launches.
func (s *LaunchSpec) Kernel() *Kernel { return s.k }

// Config is the spec's launch shape.
func (s *LaunchSpec) Config() cuda.LaunchConfig { return s.cfg }

// Launch checks a launch of k with cfg and args on d, then queues it on s; the future
// completes when the GPU has run it.
func Launch(ctx context.Context, s *Stream, k *Kernel, cfg cuda.LaunchConfig, args []any) *Future {
	if s == nil {
		return actor.Completed(struct{}{}, Invalid("launch on a nil stream"))
	}
	spec, err := PrepareLaunch(s.dev, k, cfg, args)
	if err != nil {
		return actor.Completed(struct{}{}, err)
	}
	o := &launchOp{spec: spec}
	return Submit(ctx, s, &o.Msg, o, Tracking{})
}

// launchOp is a kernel launch: the hottest operation, one object.
type launchOp struct {
	Msg
	spec LaunchSpec
}

func (o *launchOp) Enqueue(rt backend.Device, tr *Tracker, h backend.Stream) error {
	spec := o.spec
	o.spec = LaunchSpec{} // the future outlives the launch; its arguments need not
	if err := spec.Enqueue(rt, h); err != nil {
		return err
	}
	tr.Launched(h, spec.k.name)
	return nil
}

// Enqueue launches the spec on stream h; on the actor thread. Buffers freed since the spec was
// prepared (or whose allocation failed) and closed modules are refused here.
func (s *LaunchSpec) Enqueue(rt backend.Device, h backend.Stream) error {
	if err := s.resolve(); err != nil {
		return err
	}
	var err error
	switch {
	case s.cfg.Extended():
		err = s.launchEx(rt, h, launchAttrs(&s.cfg))
	case int(s.cfg.SharedMem) > s.k.mod.dev.limits.defaultShared:
		if err := s.k.prepare(rt, &s.cfg); err != nil {
			return err
		}
		fallthrough
	default:
		err = rt.Launch(s.k.h, s.cfg.Grid, s.cfg.Block, s.cfg.SharedMem, h, s.args)
	}
	if err != nil {
		return fmt.Errorf("gpuactor: launching %s: %w", s.k.name, err)
	}
	return nil
}

// Node is the checked launch as a graph kernel node's parameters, launch attributes included;
// on the actor thread, where it refuses a closed module and buffers freed since the spec was
// prepared (or whose allocation failed), fills in the buffers' addresses, raises the kernel's
// shared memory limit when the launch needs it and checks that a cooperative grid fits.
func (s *LaunchSpec) Node(rt backend.Device) (backend.KernelNode, error) {
	if err := s.resolve(); err != nil {
		return backend.KernelNode{}, err
	}
	if err := s.k.prepare(rt, &s.cfg); err != nil {
		return backend.KernelNode{}, err
	}
	return backend.KernelNode{Kernel: s.k.h, Grid: s.cfg.Grid, Block: s.cfg.Block, SharedMem: s.cfg.SharedMem, Args: s.args,
		Attrs: launchAttrs(&s.cfg)}, nil
}

// resolve refuses a closed module and buffers freed since the launch was prepared (or whose
// allocation failed), and writes the buffers' addresses into args. On the actor thread.
func (s *LaunchSpec) resolve() error {
	k := s.k
	if k.mod.closed.Load() {
		return Closed("kernel %s: module %s was closed", k.name, k.mod.name)
	}
	for _, m := range s.mems {
		if !m.b.ok() { // freed, failed, or its address still to collect (startalloc.go)
			if err := m.b.usable(fmt.Sprintf("kernel %s argument %d", k.name, m.arg)); err != nil {
				return err
			}
		}
		// Written only when it changes: a spec may be resolved more than once, and a backend
		// may keep the slice it was given (a graph node), whose readers a write of the same
		// value would still race.
		if bits := uint64(m.b.ptr) + m.off; s.args[m.arg].Bits != bits {
			s.args[m.arg].Bits = bits
		}
	}
	return nil
}

// PrepareLaunch checks a launch of k with cfg and args on d, on the caller's goroutine, off
// the actor thread. Memory arguments are checked for their device and range here; their
// addresses are filled in on the actor thread.
func PrepareLaunch(d *Device, k *Kernel, cfg cuda.LaunchConfig, args []any) (LaunchSpec, error) {
	if k == nil {
		return LaunchSpec{}, Invalid("launch of a nil kernel")
	}
	if k.mod.dev != d {
		return LaunchSpec{}, wrongKernelDevice(k, d)
	}
	if err := d.checkConfig(k, cfg); err != nil {
		return LaunchSpec{}, err
	}
	packed, mems, err := d.packArgs(k, args)
	if err != nil {
		return LaunchSpec{}, err
	}
	return LaunchSpec{k: k, cfg: cfg, args: packed, mems: mems}, nil
}

func (d *Device) checkConfig(k *Kernel, cfg cuda.LaunchConfig) error {
	p := &d.limits
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: kernel %s: "+format, append([]any{ErrLaunchConfig, k.name}, a...)...)
	}
	g, b := cfg.Grid, cfg.Block
	if g.X == 0 || g.Y == 0 || g.Z == 0 || b.X == 0 || b.Y == 0 || b.Z == 0 {
		return bad("grid %v and block %v must have no zero extent (use cuda.Dim)", g, b)
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
	if int(cfg.SharedMem) > p.MaxSharedMem {
		return bad("%d bytes of dynamic shared memory, the device allows %d per block (its opt-in limit)", cfg.SharedMem, p.MaxSharedMem)
	}
	if cfg.Extended() {
		return d.checkAttrs(k, &cfg)
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
// whose address resolve adds on the actor thread.
func (d *Device) packArg(k *Kernel, i int, a any, want *param) (backend.Arg, *Buffer, uint64, error) {
	switch v := a.(type) {
	case int32:
		return backend.Arg{Kind: cuda.Int32, Bits: uint64(uint32(v))}, nil, 0, nil
	case uint32:
		return backend.Arg{Kind: cuda.Uint32, Bits: uint64(v)}, nil, 0, nil
	case int64:
		return backend.Arg{Kind: cuda.Int64, Bits: uint64(v)}, nil, 0, nil
	case uint64:
		return backend.Arg{Kind: cuda.Uint64, Bits: v}, nil, 0, nil
	case cuda.ConditionalHandle: // cudaGraphConditionalHandle: unsigned long long
		return backend.Arg{Kind: cuda.Uint64, Bits: uint64(v)}, nil, 0, nil
	case float32:
		return backend.Arg{Kind: cuda.Float32, Bits: uint64(math.Float32bits(v))}, nil, 0, nil
	case float64:
		return backend.Arg{Kind: cuda.Float64, Bits: math.Float64bits(v)}, nil, 0, nil
	case cuda.DevicePtr:
		return backend.Arg{Kind: cuda.Pointer, Bits: uint64(v)}, nil, 0, nil
	case cuda.TextureObject:
		return backend.Arg{Kind: cuda.Texture, Bits: uint64(v)}, nil, 0, nil
	case cuda.SurfaceObject:
		return backend.Arg{Kind: cuda.Surface, Bits: uint64(v)}, nil, 0, nil
	case KernelObject: // a texture or surface (textures.Texture, textures.Surface)
		arg, err := d.objectArg(k, i, v)
		return arg, nil, 0, err
	case Mem: // a buffer, a slice of one, or a public type built on a buffer (alloc.Buffer)
		b, off, n := Region(v)
		if b == nil || b.dev == nil {
			return backend.Arg{}, nil, 0, fmt.Errorf("%w: kernel %s argument %d is a nil buffer", ErrKernelArgs, k.name, i)
		}
		if b.dev != d {
			return backend.Arg{}, nil, 0, fmt.Errorf("%w: kernel %s argument %d lives on device %d, launched on device %d", ErrWrongDevice, k.name, i, b.dev.ordinal, d.ordinal)
		}
		if off > b.size || n > b.size-off {
			return backend.Arg{}, nil, 0, OutOfRange("kernel %s argument %d: slice [%d, %d) runs past its %d-byte buffer", k.name, i, off, off+n, b.size)
		}
		return backend.Arg{Kind: cuda.Pointer}, b, off, nil
	case int, uint:
		arg, err := goInt(k, i, v, want)
		return arg, nil, 0, err
	}
	return backend.Arg{}, nil, 0, fmt.Errorf("%w: kernel %s argument %d has unsupported Go type %T (use int32, uint32, int64, uint64, float32, float64, a device buffer or slice, cuda.DevicePtr, cuda.ConditionalHandle, a texture or surface, or their objects)", ErrKernelArgs, k.name, i, a)
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
	case cuda.Int32:
		fits = s >= math.MinInt32 && s <= math.MaxInt32 && (neg || u <= math.MaxInt32)
	case cuda.Uint32:
		fits = !neg && u <= math.MaxUint32
	case cuda.Int64:
		fits = neg || u <= math.MaxInt64
	case cuda.Uint64:
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

// wrongKernelDevice is the error of a launch of k on d, another device than its module's.
// Two devices of one ordinal are two openings of one GPU (a restart reopens it), which the
// ordinal alone does not tell apart: the error says which one the kernel belongs to.
func wrongKernelDevice(k *Kernel, d *Device) error {
	from := k.mod.dev
	if from.ordinal != d.ordinal {
		return fmt.Errorf("%w: kernel %s was loaded on device %d, launched on device %d", ErrWrongDevice, k.name, from.ordinal, d.ordinal)
	}
	state := "still open"
	if from.Closed() {
		state = "since closed: a replaced device"
	}
	return fmt.Errorf("%w: kernel %s was loaded on another opening of device %d (opened %s, %s), "+
		"launched on the one opened %s: a device opened again needs its kernels loaded again "+
		"(device.Program loads them on whichever device asks)", ErrWrongDevice, k.name, d.ordinal,
		from.ops.epoch.Format(openedFormat), state, d.ops.epoch.Format(openedFormat))
}

// openedFormat tells apart the openings of one device in errors.
const openedFormat = "15:04:05.000000"
