package device

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
)

// Program is device code that is not tied to one device: it is compiled at most once per
// architecture, and loaded lazily on each device a kernel of it is asked for — again on a
// device that replaced a failed one (a restart), which a Module, loaded on one device, cannot
// follow. Make it once (NewProgram from source, LoadProgram from a compiled image), ask it for
// a kernel on whichever device a job runs on (Kernel), and Close it when done. Safe for
// concurrent use.
type Program struct {
	name string
	err  error // what NewProgram or LoadProgram found wrong, returned by every Kernel

	// From source (NewProgram): compiled per architecture into images.
	fromSource bool
	src        Source
	options    []string
	// From an image (LoadProgram): loaded as it is.
	image []byte
	kind  ImageKind
	sim   map[string]cuda.SimKernel

	mu     sync.Mutex
	closed bool
	images map[archKey]*once[compiled] // NewProgram: one compile per architecture
	mods   map[*Device]*once[*Module]  // the module loaded on each open device

	compiles atomic.Int64 // compiles run, for tests
}

// archKey is what the image a device needs depends on: pickArch's inputs.
type archKey struct {
	sim  bool
	arch int
}

type compiled struct {
	image []byte
	kind  ImageKind
}

// once is a result some goroutine is making, which every caller that wants it waits for.
type once[T any] struct {
	done chan struct{} // closed once v and err are set
	v    T
	err  error
}

// NewProgram makes a program of src, compiled with opts on first use for each architecture
// (as Compile compiles, with its disk cache). It compiles nothing yet: an empty source is
// reported by Kernel, as a compile error is.
func NewProgram(src Source, opts ...CompileOption) *Program {
	var cc compileConfig
	for _, o := range opts {
		o(&cc)
	}
	if src.Name == "" {
		src.Name = "kernel.cu"
	}
	p := &Program{name: src.Name, fromSource: true, src: src, options: cc.options, images: map[archKey]*once[compiled]{}}
	if strings.TrimSpace(src.Code) == "" {
		p.err = core.Invalid("NewProgram of empty source %q", src.Name)
	}
	return p
}

// LoadProgram makes a program of compiled device code, as LoadModule takes it: image of kind
// PTX or Cubin, and sim, the kernels' Go implementations for the simulator. The same image
// loads on every device, so it must suit each: PTX the driver compiles for the device, or, as
// Cubin, a fatbin holding code for each architecture (the driver picks the device's). It
// loads nothing yet: a bad image is reported by Kernel, on the device it does not suit.
func LoadProgram(name string, image []byte, kind ImageKind, sim map[string]cuda.SimKernel) *Program {
	p := &Program{name: name, image: image, kind: kind, sim: sim}
	if kind != PTX && kind != Cubin {
		p.err = core.Invalid("LoadProgram of an image of unknown kind %d (PTX or Cubin)", kind)
	}
	return p
}

// Name is the program's source name.
func (p *Program) Name() string { return p.name }

// Kernel is the kernel name of the program on device d: on the first call for d it compiles
// the program for d's architecture, unless a device of that architecture already had it
// compiled, and loads it on d; later calls find it loaded. It returns once the kernel is found
// on d. Concurrent first calls compile and load once. A compile error is a *CompileError, and
// is kept: the program does not compile again for that architecture. A closed program fails
// with ErrClosed. The kernel stays valid until d or the program closes.
func (p *Program) Kernel(ctx context.Context, d *Device, name string) (*Kernel, error) {
	if p == nil {
		return nil, core.Invalid("Kernel of a nil program")
	}
	if d == nil {
		return nil, core.Invalid("Kernel %q of program %s on a nil device", name, p.name)
	}
	if p.err != nil {
		return nil, p.err
	}
	m, err := p.module(ctx, d)
	if err != nil {
		return nil, err
	}
	return m.Kernel(ctx, name)
}

// module is the program's module on d, loading it on first use.
func (p *Program) module(ctx context.Context, d *Device) (*Module, error) {
	for {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return nil, core.Closed("program %s was closed", p.name)
		}
		o, ok := p.mods[d]
		if !ok {
			p.forgetClosed()
			o = &once[*Module]{done: make(chan struct{})}
			if p.mods == nil {
				p.mods = map[*Device]*once[*Module]{}
			}
			p.mods[d] = o
		}
		p.mu.Unlock()
		if !ok {
			p.load(ctx, d, o)
		}
		select {
		case <-o.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		// The caller that loaded gave up (its context ended): the next caller loads again.
		if o.err != nil && isContextErr(o.err) && ctx.Err() == nil {
			continue
		}
		return o.v, o.err
	}
}

// load loads the program on d into o, and forgets o when it failed, so that a later call
// tries again.
func (p *Program) load(ctx context.Context, d *Device, o *once[*Module]) {
	m, err := p.loadOn(ctx, d)
	p.mu.Lock()
	if err == nil && p.closed { // Close ran meanwhile and did not see this module
		err = errors.Join(core.Closed("program %s was closed", p.name), m.Close(context.WithoutCancel(ctx)))
		m = nil
	}
	if err != nil && p.mods[d] == o {
		delete(p.mods, d)
	}
	o.v, o.err = m, err
	close(o.done)
	p.mu.Unlock()
}

// loadOn compiles the program for d when it has to, and loads it on d.
func (p *Program) loadOn(ctx context.Context, d *Device) (*Module, error) {
	if !p.fromSource {
		return d.LoadModule(ctx, p.name, p.image, p.kind, p.sim)
	}
	c, err := p.compiledFor(ctx, d)
	if err != nil {
		return nil, err
	}
	spec := backend.ModuleSpec{Image: c.image, ImageKind: backend.ImageKind(c.kind), SimKernels: p.src.Sim, SimGlobals: p.src.SimGlobals}
	m, err := core.LoadModule(ctx, d.core(), p.src.Name, spec, core.CUDASignatures(p.src.Code))
	return (*Module)(m), err
}

// compiledFor is the program's image for d's architecture, compiled on the first call for it.
func (p *Program) compiledFor(ctx context.Context, d *Device) (compiled, error) {
	inf := d.info()
	key := archKey{sim: inf.kind == BackendSim, arch: inf.props.ComputeCapability.Arch()}
	p.mu.Lock()
	o, ok := p.images[key]
	if !ok {
		o = &once[compiled]{done: make(chan struct{})}
		p.images[key] = o
	}
	p.mu.Unlock()
	if !ok {
		p.compiles.Add(1)
		image, kind, err := d.compileImage(p.src, p.options)
		var ce *CompileError
		p.mu.Lock()
		if err != nil && !errors.As(err, &ce) { // not the source's fault: the next call tries again
			delete(p.images, key)
		}
		o.v, o.err = compiled{image: image, kind: kind}, err
		close(o.done)
		p.mu.Unlock()
	}
	select {
	case <-o.done:
		return o.v, o.err
	case <-ctx.Done():
		return compiled{}, ctx.Err()
	}
}

// forgetClosed drops the modules of devices that closed: a device replaced by a restart is
// not kept alive by its programs. Called with p.mu held.
func (p *Program) forgetClosed() {
	for d := range p.mods {
		if d.core().Closed() {
			delete(p.mods, d) // its module was released with its device
		}
	}
}

// Close unloads the program's modules from every device still open that it was loaded on,
// and returns once they are unloaded (or ctx ends); the kernels it gave can no longer be
// launched, and later Kernel calls fail with ErrClosed. The devices stay open. Closing twice
// is harmless.
func (p *Program) Close(ctx context.Context) error {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	mods := p.mods
	p.mods = nil
	p.mu.Unlock()
	var errs []error
	for d, o := range mods {
		select {
		case <-o.done: // a load under way: it finishes, then its module is unloaded here
		case <-ctx.Done():
			return errors.Join(append(errs, ctx.Err())...)
		}
		if o.err != nil || d.core().Closed() {
			continue // nothing loaded, or released with its device
		}
		// A device that failed, or closed meanwhile, fails the unload with its own error,
		// which Device.Err gives; its module goes when it closes.
		if err := o.v.Close(ctx); err != nil && d.Err() == nil && !d.core().Closed() {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
