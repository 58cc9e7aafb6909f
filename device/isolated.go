package device

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gpuactor/gpuactor/internal/backendsel"
	"github.com/gpuactor/gpuactor/internal/core"
	"github.com/gpuactor/gpuactor/internal/remote"
	isim "github.com/gpuactor/gpuactor/internal/sim"
	"github.com/gpuactor/gpuactor/internal/worker"
	"github.com/gpuactor/gpuactor/isolate"
	"github.com/gpuactor/gpuactor/sim"
)

// Isolated runs the device in a worker process of its own, which owns the GPU: a sticky fault,
// a crash or a kill ends that process, not this one, and the device is failed with
// isolate.ErrWorkerDied; opening it again (a supervisor does, see package supervise) starts a
// fresh worker, which has the GPU at once. Inside one process a GPU that took a sticky fault
// never comes back, so this is how a service survives one. opts configure the worker (package
// isolate).
//
// The program must call isolate.Main first thing in main (a test binary: in TestMain): the
// worker is the program's own binary run again (or isolate.WithBinary). The API is the same as for a
// device in process, with these differences: host memory that copies use must be gpuactor's
// own (host buffers, staging); Go memory registered with the GPU, managed memory's host views,
// host functions, and IPC and external-resource file descriptors are refused with an error
// matching cudaerr.NotSupported; each call that needs an answer from the GPU crosses to the
// worker and back (a few microseconds). On the simulator the worker runs a simulator made with
// the same options, separate from the parent's (its memory is its own), and runs the simulator
// kernels isolate.Main was given (isolate.WithKernels), by name.
func Isolated(opts ...isolate.Option) Option {
	return func(c *config) {
		iso := &isolation{}
		for _, o := range opts {
			if wo := worker.Boxed(o).Unbox(); wo != nil {
				iso.opts = append(iso.opts, wo)
			}
		}
		c.isolated = iso
	}
}

// minCallCheck is the least time a call waits on a silent worker before the watchdog's check
// pings it (WithWatchdog).
const minCallCheck = time.Second

// isolation is how an isolated device's worker is started (Isolated).
type isolation struct {
	opts []worker.Option
}

// openIsolated starts a worker for device ordinal and opens the device over it. The backend
// the worker opens is the one c names (auto resolves there, not here: the parent need not
// load the CUDA runtime at all).
func openIsolated(ctx context.Context, c *config, ordinal int) (*Device, *remote.Backend, error) {
	if c.flags != nil {
		return nil, nil, core.Invalid("isolated device %d: WithFlags(%v) cannot apply: the worker process makes the device's context", ordinal, *c.flags)
	}
	spec := backendsel.WorkerSpec{Backend: string(c.backend)}
	if c.backend == BackendSim {
		if c.simulator == nil {
			m, err := backendsel.DefaultMachine()
			if err != nil {
				return nil, nil, err
			}
			c.simulator = (*sim.Simulator)(m)
		}
		// The machine's fault plan for ordinal goes to its first worker only: a worker started
		// to replace one the plan failed must not fail the same way.
		ss := (*isim.Machine)(c.simulator).WorkerSpec(ordinal)
		spec.Sim = &ss
	}
	env, err := spec.Env()
	if err != nil {
		return nil, nil, fmt.Errorf("gpuactor: isolated device %d: %w", ordinal, err)
	}
	start := func(ctx context.Context) (*worker.Process, error) {
		opts := append([]worker.Option{worker.WithEnv(env)}, c.isolated.opts...)
		if c.watchdog > 0 {
			// A worker frozen while the device's goroutine waits for its answer is stuck too,
			// and the watchdog cannot see it from a goroutine that waits. At least a second:
			// a worker on a loaded machine may take a while to be scheduled, and a ping it
			// answers late must not kill it.
			opts = append(opts, worker.WithCallTimeout(max(c.watchdog, minCallCheck)))
		}
		return remote.Start(ctx, opts...)
	}
	rb, err := remote.New(ctx, start, remote.WithFailure(func(lost error) error {
		return fmt.Errorf("%w: device %d: its worker process is gone; reopen the device for a fresh one: %w", ErrDeviceFailed, ordinal, lost)
	}))
	if errors.Is(err, isolate.ErrWorkerStart) {
		return nil, nil, fmt.Errorf("gpuactor: isolated device %d: %w (the worker is this program run again unless isolate.WithBinary names another; its main must call isolate.Main first thing)", ordinal, err)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("gpuactor: isolated device %d: %w", ordinal, err)
	}
	d, err := open(ctx, rb, c, ordinal, rb)
	if err != nil {
		_ = rb.Close()
		return nil, nil, err
	}
	if c.backend == BackendSim {
		// The simulator's Fail and Lose reach the worker serving ordinal now, while it runs.
		detach := (*isim.Machine)(c.simulator).Attach(ordinal, rb)
		go func() {
			<-rb.Process().Done()
			detach()
		}()
	}
	return d, rb, nil
}

// Isolated reports whether the device runs in a worker process (the Isolated option).
func (d *Device) Isolated() bool { return d.info().isolated }

// WorkerPID is the process id of an isolated device's worker; 0 for a device in process.
func (d *Device) WorkerPID() int {
	if d == nil {
		return 0
	}
	if rb, ok := d.core().Backend().(*remote.Backend); ok {
		return rb.Process().Pid()
	}
	return 0
}
