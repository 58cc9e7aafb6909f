package remote

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"os"
	"runtime"
	"time"

	"github.com/gpuactor/gpuactor/cudaerr"
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/worker"
)

// Serve is the worker's role for a remote backend: pass it to worker.Main. It serves the
// parent's calls one at a time, in order, on one locked OS thread, which is the thread that
// opens the device, since a runtime device may be used only from the thread that opened it.
// It returns when the parent asks the worker to exit or goes away, or once it answered a
// sticky error (with an error saying so, which the worker prints before it exits).
func Serve(be backend.Backend, opts ...ServeOption) func(ctx context.Context, c *worker.Conn) error {
	var cfg serveConfig
	for _, o := range opts {
		o(&cfg)
	}
	return func(ctx context.Context, c *worker.Conn) error {
		if be == nil {
			return errors.New("remote: Serve with no backend")
		}
		// Serve runs the handler on this goroutine; locking it keeps every call on one thread.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		s := &server{be: be, kernels: cfg.kernels, out: make([]byte, 0, 256), stop: cancel}
		err := c.Serve(ctx, s.handle, worker.ServeCodec(Codec{}), worker.ServeIdle(s.idle))
		if s.sticky != nil {
			return fmt.Errorf("the device failed with a sticky error; the process can no longer use it, so the worker exits: %w", s.sticky)
		}
		return err
	}
}

// ServeOption configures Serve.
type ServeOption func(*serveConfig)

type serveConfig struct {
	kernels map[string]backend.SimKernel
}

// WithKernels gives the worker the simulator kernels it may run, by name: a module the parent
// loads with SimKernels runs the worker's functions of those names. Both processes are the
// same program, so it registers the same functions under the same names in both.
func WithKernels(kernels map[string]backend.SimKernel) ServeOption {
	return func(c *serveConfig) { c.kernels = maps.Clone(kernels) }
}

// entry is how the worker serves one method id (serve_gen.go's table): serve reads the
// arguments, calls the device and writes the results; a posted method's request starts with
// the stream it is ordered on (posted.go).
type entry struct {
	serve  func(s *server, in *dec, out *enc) error
	posted bool
}

// inline answers a result and an error together, for the methods whose result holds even
// when they fail (GraphLaunchN's count, GraphExecUpdate's info): dec.inline reads it.
func inline(out *enc, err error) error {
	if err == nil {
		out.i64(0)
		out.str("")
		return nil
	}
	code, msg := Codec{}.Encode(err)
	out.i64(code)
	out.str(msg)
	return nil
}

// server is the worker's state: its backend and the one device it opened.
type server struct {
	be      backend.Backend
	kernels map[string]backend.SimKernel // WithKernels
	later   deferred                     // posted operations' errors, for later calls
	board   *serverBoard                 // the event board (board.go); nil until the parent sends it
	dev     backend.Device
	host    regionTable // memory shared with the parent (HostAlloc)
	out     []byte

	// A sticky error poisons the device for this process for good: the worker answers it,
	// then stops serving (stop ends Serve's context, which Serve checks before the next
	// call) and exits, so the parent's next calls fail as a dead worker's and a fresh
	// worker can have the GPU.
	stop   context.CancelFunc
	sticky error
}

func (s *server) handle(_ context.Context, req []byte) ([]byte, error) {
	if slowCalls > 0 {
		defer noteSlow(os.Stderr, "worker: serving", req, time.Now())
	}
	in := dec{b: req}
	m := method(in.u64())
	isPost := isPosted(m)
	var stream backend.Stream
	if isPost {
		stream = backend.Stream(in.u64())
	} else if err := s.later.take(m, in); err != nil {
		s.attend()
		return nil, s.failed(err)
	}
	fields := in // the method's own fields, for s.later
	out := enc{b: s.out[:0]}
	var err error
	switch {
	case m == 0 || m >= numMethods || table[m].serve == nil:
		return nil, fmt.Errorf("remote: unknown method %d", m)
	case s.dev == nil && m != mInfo && m != mOpen:
		return nil, &cudaerr.Error{Op: "remote", Code: cudaerr.InvalidDevice, Message: "no device is open in the worker"}
	default:
		err = table[m].serve(s, &in, &out)
	}
	if in.err != nil { // a layout bug, not the device's error: say so
		err = fmt.Errorf("remote: method %s: %w", methodNames[m], in.err)
	}
	if isPost {
		if err != nil {
			s.later.keep(stream, err, cudaerr.IsSticky(err))
			s.attend()
		} else {
			s.later.note(m, stream, fields)
			s.noteBoard(m, fields, nil)
		}
		return nil, nil // nobody waits for the answer
	}
	if err != nil {
		return nil, s.failed(err)
	}
	s.later.note(m, 0, fields)
	if m == mStreamDestroy {
		s.attend() // its stream's error, if any, went with it
	}
	s.noteBoard(m, fields, out.b)
	s.out = out.b
	return out.b, nil
}

// idle is the worker's work between requests: polling the events on the board.
func (s *server) idle() bool {
	if s.board == nil || s.dev == nil || s.sticky != nil {
		return false
	}
	return s.board.poll(s.dev)
}

// attend tells the parent, through the board, whether posted errors wait for a call.
func (s *server) attend() {
	if s.board != nil {
		s.board.attend(attendDeferred, s.later.pending())
	}
}

// noteBoard keeps the board up to date with an operation that succeeded: fields are its own
// fields, answer its answer (nil for a posted one).
func (s *server) noteBoard(m method, fields dec, answer []byte) {
	if s.board == nil {
		return
	}
	switch m {
	case mEventCreate:
		fields.u64() // the flags
		slot := int(fields.i64())
		if fields.err == nil && len(answer) >= 8 {
			s.board.created(backend.Event(binary.LittleEndian.Uint64(answer)), slot)
		}
	case mEventRecord:
		s.board.record(backend.Event(fields.u64()))
	case mEventDestroy:
		s.board.destroyed(backend.Event(fields.u64()))
	case mEventQuery:
		s.board.complete(backend.Event(fields.u64()))
	case mEventSynchronize:
		// Every record before this one completed too: publish those before answering, or a
		// query of an earlier event would read "not ready" from the board.
		s.board.complete(backend.Event(fields.u64()))
		s.board.poll(s.dev)
	case mStreamSynchronize, mSynchronize:
		// What the parent waited for is done: let the board say so before its next poll.
		s.board.poll(s.dev)
	}
}

// failed is the answer of a call that failed with err: a sticky error is the worker's last.
func (s *server) failed(err error) error {
	if cudaerr.IsSticky(err) && s.sticky == nil {
		s.sticky = err
		if s.stop != nil {
			s.stop()
		}
	}
	return err
}

func (s *server) info(in *dec, out *enc) error {
	switch in.u64() {
	case infoName:
		out.b = append(out.b, s.be.Name()...)
		return nil
	case infoRuntime:
		v, err := s.be.RuntimeVersion()
		out.i64(int64(v))
		return err
	case infoDriver:
		v, err := s.be.DriverVersion()
		out.i64(int64(v))
		return err
	case infoCount:
		v, err := s.be.DeviceCount()
		out.i64(int64(v))
		return err
	}
	return errors.New("remote: unknown info request")
}

func (s *server) open(in *dec) error {
	ordinal := in.int()
	if in.err != nil {
		return in.err
	}
	if s.dev != nil {
		if s.dev.Ordinal() == ordinal {
			return nil
		}
		return &cudaerr.Error{Op: "cudaSetDevice", Code: cudaerr.InvalidDevice,
			Message: fmt.Sprintf("this worker serves device %d; device %d needs a worker of its own", s.dev.Ordinal(), ordinal)}
	}
	dev, err := s.be.Open(ordinal)
	if err != nil {
		return err
	}
	s.dev = dev
	return nil
}
