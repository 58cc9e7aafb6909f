// Package isolate is the vocabulary of isolated devices, which run in a worker process of
// their own (device.Isolated): the worker's options, the Main every program that opens one
// calls first, and the errors that say a worker died or did not start.
//
//	func main() {
//		isolate.Main() // in a worker: serves its device and exits; elsewhere: returns at once
//		dev, err := device.Open(ctx, 0, device.Isolated(isolate.WithHeartbeat(time.Second, 10*time.Second)))
//		...
//	}
//
// A device's Close ends its worker: asked to exit, it does, and the device reads as closed
// (Health fails with device.ErrClosed; Err stays nil), never as failed. A worker that ends any
// other way — killed, crashed, exited after a sticky fault — died, even while Close runs:
// once Close returns, the device's Err matches ErrWorkerDied every time, however the kill
// and the close raced, and Close itself returns nil, as it does for any failed device.
package isolate

import (
	"context"
	"io"
	"maps"
	"time"

	"github.com/gpuactor/gpuactor/cuda"
	"github.com/gpuactor/gpuactor/internal/backendsel"
	"github.com/gpuactor/gpuactor/internal/remote"
	"github.com/gpuactor/gpuactor/internal/worker"
)

// ErrWorkerDied is wrapped, beside device.ErrDeviceFailed, by the failure of an isolated
// device whose worker process ended: it crashed, was killed, exited after a sticky fault, or
// stopped answering heartbeats. Every future the device had not completed fails with it. The
// GPU is not lost: open the device again (or let a supervisor) and a fresh worker has it.
var ErrWorkerDied = worker.ErrWorkerDied

// ErrWorkerStart is wrapped by device.Open's error when an isolated device's worker process
// could not be started or did not answer in time (WithStartTimeout); the error says why (the
// binary, its exit status, the end of its standard error). Nothing is left running.
var ErrWorkerStart = worker.ErrStartFailed

// Option configures the worker process of an isolated device (device.Isolated). Make one with
// the functions below; the zero Option changes nothing.
type Option worker.Boxed

// WithBinary runs path (with args) as the worker instead of the program's own binary; it must
// call Main first thing in main, as the program does.
func WithBinary(path string, args ...string) Option {
	return Option(worker.Box(worker.WithBinary(path, args...)))
}

// WithStderr sends the worker's standard error to w (default: the program's). Its last lines
// are also quoted in the errors that say a worker died or did not start.
func WithStderr(w io.Writer) Option { return Option(worker.Box(worker.WithStderr(w))) }

// WithHeartbeat pings the worker every `every`, and kills it as hung once no answer came for
// hungAfter (defaults 500 ms and 5 s): its device then fails with ErrWorkerDied. The worker
// answers pings while a long GPU call runs, so only a frozen process counts as hung; a GPU
// that stops making progress is the watchdog's (device.WithWatchdog). every <= 0: no periodic
// heartbeat, but a worker that has said nothing for hungAfter while the device waits for an
// answer is still pinged, and killed as hung unless it answers within hungAfter more, so that
// a frozen worker cannot hold the device, or its Close, for good; hungAfter <= 0 as well:
// nothing is checked.
func WithHeartbeat(every, hungAfter time.Duration) Option {
	return Option(worker.Box(worker.WithHeartbeat(every, hungAfter)))
}

// WithStartTimeout bounds how long device.Open waits for the worker to start (default 10 s).
func WithStartTimeout(d time.Duration) Option { return Option(worker.Box(worker.WithStartTimeout(d))) }

// MainOption configures Main.
type MainOption func(*mainConfig)

type mainConfig struct {
	kernels map[string]cuda.SimKernel
}

// WithKernels gives the worker the simulator kernels it runs: a module loaded with simulator
// kernels (device.LoadModule, Source.Sim) runs, in the worker, the functions registered here
// under the same names. Register the same functions the program uses. A module naming a
// kernel the worker lacks fails to load.
func WithKernels(kernels map[string]cuda.SimKernel) MainOption {
	return func(c *mainConfig) {
		if c.kernels == nil {
			c.kernels = map[string]cuda.SimKernel{}
		}
		maps.Copy(c.kernels, kernels)
	}
}

// Main makes this program able to run isolated devices. Call it first thing in main (in a test
// binary, in TestMain). In a process that device.Open started as a device's worker it serves
// that device until the parent closes it or goes away, and exits; in any other process it
// returns at once, having done nothing.
func Main(opts ...MainOption) {
	worker.Main(func(ctx context.Context, c *worker.Conn) error {
		var mc mainConfig
		for _, o := range opts {
			o(&mc)
		}
		be, err := backendsel.WorkerBackend()
		if err != nil {
			return err
		}
		return remote.Serve(be, remote.WithKernels(mc.kernels))(ctx, c)
	})
}
