package device

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"time"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/remote"
	"github.com/gpuactor/gpuactor/internal/worker"
)

// ErrWorkerDied is wrapped, beside ErrDeviceFailed, by the failure of an isolated device whose
// worker process ended: it crashed, was killed, exited after a sticky fault, or stopped
// answering heartbeats. Every future the device had not completed fails with it. The GPU is
// not lost: open the device again (or let a supervisor) and a fresh worker has it.
var ErrWorkerDied = worker.ErrWorkerDied

// ErrWorkerStart is wrapped by Open's error when an isolated device's worker process could not
// be started or did not answer in time (WorkerStartTimeout); the error says why (the binary,
// its exit status, the end of its standard error). Nothing is left running.
var ErrWorkerStart = worker.ErrStartFailed

// envIsolated carries an isolated device's worker spec to the worker process.
const envIsolated = "GPUACTOR_ISOLATED"

// workerSpec is what the worker needs to open the backend the parent asked for.
type workerSpec struct {
	Backend BackendKind
	Sim     *simConfig `json:",omitempty"`
}

// WorkerOption configures the worker process of an isolated device (Isolated).
type WorkerOption func(*isolation)

type isolation struct {
	opts []worker.Option
}

// WorkerBinary runs path (with args) as the worker instead of the program's own binary; it
// must call WorkerMain first thing in main, as the program does.
func WorkerBinary(path string, args ...string) WorkerOption {
	return func(c *isolation) { c.opts = append(c.opts, worker.WithBinary(path, args...)) }
}

// WorkerStderr sends the worker's standard error to w (default: the program's). Its last lines
// are also quoted in the errors that say a worker died or did not start.
func WorkerStderr(w io.Writer) WorkerOption {
	return func(c *isolation) { c.opts = append(c.opts, worker.WithStderr(w)) }
}

// WorkerHeartbeat pings the worker every `every`, and kills it as hung once no answer came
// for hungAfter (defaults 500 ms and 5 s): its device then fails with ErrWorkerDied. The
// worker answers pings while a long GPU call runs, so only a frozen process counts as hung; a
// GPU that stops making progress is the watchdog's (WithWatchdog). every <= 0: no heartbeat.
func WorkerHeartbeat(every, hungAfter time.Duration) WorkerOption {
	return func(c *isolation) { c.opts = append(c.opts, worker.WithHeartbeat(every, hungAfter)) }
}

// WorkerStartTimeout bounds how long Open waits for the worker to start (default 10 s).
func WorkerStartTimeout(d time.Duration) WorkerOption {
	return func(c *isolation) { c.opts = append(c.opts, worker.WithStartTimeout(d)) }
}

// Isolated runs the device in a worker process of its own, which owns the GPU: a sticky fault,
// a crash or a kill ends that process, not this one, and the device is failed with
// ErrWorkerDied; opening it again (a supervisor does, see package supervise) starts a fresh
// worker, which has the GPU at once. Inside one process a GPU that took a sticky fault never
// comes back, so this is how a service survives one.
//
// The program must call WorkerMain first thing in main (a test binary: in TestMain): the
// worker is the program's own binary run again (or WorkerBinary). The API is the same as for a
// device in process, with these differences: host memory that copies use must be gpuactor's
// own (host buffers, staging); Go memory registered with the GPU, managed memory's host views,
// host functions, and IPC and external-resource file descriptors are refused with an error
// matching cudaerr.NotSupported; each call that needs an answer from the GPU crosses to the
// worker and back (a few microseconds). On the simulator the worker runs a simulator made with
// the same options, separate from the parent's (its memory is its own), and runs the simulator
// kernels WorkerMain was given, by name.
func Isolated(opts ...WorkerOption) Option {
	return func(c *config) {
		iso := &isolation{}
		for _, o := range opts {
			o(iso)
		}
		c.isolated = iso
	}
}

// ServeOption configures WorkerMain.
type ServeOption func(*serveConfig)

type serveConfig struct {
	kernels map[string]cuda.SimKernel
}

// ServeKernels gives the worker the simulator kernels it runs: a module loaded with
// simulator kernels (LoadModule, Source.Sim) runs, in the worker, the functions registered
// here under the same names. Register the same functions the program uses. A module naming a
// kernel the worker lacks fails to load.
func ServeKernels(kernels map[string]cuda.SimKernel) ServeOption {
	return func(c *serveConfig) {
		if c.kernels == nil {
			c.kernels = map[string]cuda.SimKernel{}
		}
		maps.Copy(c.kernels, kernels)
	}
}

// WorkerMain makes this program able to run isolated devices. Call it first thing in main (in
// a test binary, in TestMain). In a process that Open started as a device's worker it serves
// that device until the parent closes it or goes away, and exits; in any other process it
// returns at once, having done nothing.
func WorkerMain(opts ...ServeOption) {
	worker.Main(func(ctx context.Context, c *worker.Conn) error {
		var sc serveConfig
		for _, o := range opts {
			o(&sc)
		}
		be, err := workerBackend()
		if err != nil {
			return err
		}
		return remote.Serve(be, remote.WithKernels(sc.kernels))(ctx, c)
	})
}

// workerBackend opens the backend the parent named in the worker's environment.
func workerBackend() (backend.Backend, error) {
	raw, ok := os.LookupEnv(envIsolated)
	if !ok {
		return nil, fmt.Errorf("gpuactor worker: %s is not set: was this worker started by device.Open with Isolated?", envIsolated)
	}
	_ = os.Unsetenv(envIsolated) // the worker's own children are not workers
	var spec workerSpec
	if err := json.Unmarshal([]byte(raw), &spec); err != nil {
		return nil, fmt.Errorf("gpuactor worker: reading %s: %w", envIsolated, err)
	}
	c := newConfig(nil)
	c.backend = spec.Backend
	if spec.Sim != nil {
		c.simulator = spec.Sim.build()
	}
	return selectBackend(c)
}

// openIsolated starts a worker for device ordinal and opens the device over it. The backend
// the worker opens is the one c names (auto resolves there, not here: the parent need not
// load the CUDA runtime at all).
func openIsolated(ctx context.Context, c *config, ordinal int) (*Device, *remote.Backend, error) {
	spec := workerSpec{Backend: c.backend}
	if c.backend == BackendSim {
		if c.simulator == nil {
			c.simulator = NewSimulator()
		}
		cfg := c.simulator.cfg
		spec.Sim = &cfg
	}
	raw, err := json.Marshal(spec)
	if err != nil {
		return nil, nil, fmt.Errorf("gpuactor: isolated device %d: %w", ordinal, err)
	}
	start := func(ctx context.Context) (*worker.Process, error) {
		opts := append([]worker.Option{worker.WithEnv(envIsolated + "=" + string(raw))}, c.isolated.opts...)
		return remote.Start(ctx, opts...)
	}
	rb, err := remote.New(ctx, start, remote.WithFailure(func(lost error) error {
		return fmt.Errorf("%w: device %d: its worker process is gone; reopen the device for a fresh one: %w", ErrDeviceFailed, ordinal, lost)
	}))
	if errors.Is(err, ErrWorkerStart) {
		return nil, nil, fmt.Errorf("gpuactor: isolated device %d: %w (the worker is this program run again unless WorkerBinary names another; its main must call device.WorkerMain first thing)", ordinal, err)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("gpuactor: isolated device %d: %w", ordinal, err)
	}
	d, err := open(ctx, rb, c, ordinal, rb)
	if err != nil {
		_ = rb.Close()
		return nil, nil, err
	}
	return d, rb, nil
}

// Isolated reports whether the device runs in a worker process (the Isolated option).
func (d *Device) Isolated() bool { return d.info().isolated }

// WorkerPID is the process id of an isolated device's worker; 0 for a device in process.
func (d *Device) WorkerPID() int {
	if rb, ok := d.core().Backend().(*remote.Backend); ok {
		return rb.Process().Pid()
	}
	return 0
}
