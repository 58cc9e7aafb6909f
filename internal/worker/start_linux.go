//go:build linux

package worker

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/gpuactor/gpuactor/internal/shmring"
	"github.com/gpuactor/gpuactor/internal/spin"
)

// Start starts a worker process and waits for its hello: this program's own binary (which
// must call Main first thing in main), or the one named by WithBinary. ctx bounds the start
// only; the worker then runs until Close, or until it dies. On failure nothing is left
// running: the error matches ErrStartFailed and says what the worker did (its exit status and
// the tail of its standard error, or that it never said hello).
//
// The worker gets SIGKILL when the parent dies (Pdeathsig) and exits when its control socket
// reads EOF, so it never outlives the parent.
func Start(ctx context.Context, opts ...Option) (*Process, error) {
	cfg := defaultConfig()
	for _, o := range opts {
		o(&cfg)
	}
	spin.Refresh() // its callers and ring readers spin on the process's budget
	if v, ok := os.LookupEnv(envVar); ok {
		// A worker whose main did not call Main first runs the program again, which would
		// start workers without end.
		return nil, fmt.Errorf("%w: this process was started as a worker (%s=%s) but its main did not call worker.Main first thing", ErrStartFailed, envVar, v)
	}
	bin := cfg.binary
	if bin == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("%w: finding this program's binary: %w", ErrStartFailed, err)
		}
		bin = exe
	}
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_SEQPACKET|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: socketpair: %w", ErrStartFailed, err)
	}
	ours, theirs := os.NewFile(uintptr(fds[0]), "worker-control"), os.NewFile(uintptr(fds[1]), "worker-control")
	defer theirs.Close() // the worker has its copy once started; ours must not keep it open
	nc, err := net.FileConn(ours)
	ours.Close()
	if err != nil {
		return nil, fmt.Errorf("%w: control socket: %w", ErrStartFailed, err)
	}
	uc := nc.(*net.UnixConn)

	rings, err := newRings(cfg.ringSize)
	if err != nil {
		uc.Close()
		return nil, fmt.Errorf("%w: %w", ErrStartFailed, err)
	}
	stderr := &tailWriter{w: cfg.stderr}
	cmd := exec.Command(bin, cfg.args...)
	cmd.Env = workerEnv(cfg.env)
	cmd.ExtraFiles = []*os.File{theirs} // fd 3 in the worker: controlFD
	cmd.Stdout = os.Stdout
	cmd.Stderr = stderr
	cmd.WaitDelay = time.Second // a grandchild holding the stderr pipe must not stall Wait
	// Pdeathsig fires when the *thread* that forked the worker exits, not the process. Go
	// ends a thread only when a goroutine locked to it exits locked, so forking from a fresh,
	// unlocked goroutine keeps a caller's locked thread (an actor's) from killing the worker
	// when it ends. Setpgid keeps the terminal's Ctrl-C to the parent: it decides.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	started := make(chan error, 1)
	go func() { started <- cmd.Start() }()
	if err := <-started; err != nil {
		uc.Close()
		if rings != nil {
			_ = rings.close()
		}
		return nil, fmt.Errorf("%w: %w", ErrStartFailed, err)
	}
	theirs.Close()

	ctl := &socketTransport{c: uc}
	p := &Process{
		cfg: cfg, cmd: cmd, pid: cmd.Process.Pid, ctl: ctl, data: ctl, stderr: stderr,
		pending: map[uint64]chan reply{}, exited: make(chan struct{}), done: make(chan struct{}),
	}
	if rings != nil {
		p.data = rings
	}
	if err := p.handshake(ctx, uc, rings); err != nil {
		if rings != nil {
			_ = rings.close()
		}
		// A worker that closed its socket is exiting: give it a moment so its status can be
		// told; any other is killed at once.
		waited := make(chan struct{})
		go func() { _ = cmd.Wait(); close(waited) }()
		if !errors.Is(err, errExited) {
			_ = cmd.Process.Kill()
		}
		select {
		case <-waited:
		case <-time.After(exitGrace):
			_ = cmd.Process.Kill()
			<-waited
		}
		uc.Close()
		if errors.Is(err, errExited) {
			err = fmt.Errorf("%w (%s)", err, cmd.ProcessState)
		}
		if tail := stderr.String(); tail != "" {
			err = fmt.Errorf("%w; stderr: %s", err, tail)
		}
		return nil, fmt.Errorf("%w: %s (pid %d): %w", ErrStartFailed, bin, p.pid, err)
	}
	p.lastPong.Store(time.Now().UnixNano())
	p.run()
	return p, nil
}

// errNoHello and errExited are the handshake's errors when the worker said nothing in time,
// and when it closed its socket first.
var (
	errNoHello = errors.New("no hello")
	errExited  = errors.New("it exited")
)

// newRings makes the parent's rings, requests out and responses in; nil when size <= 0 or
// rings are not supported here, so calls go over the control socket.
func newRings(size int) (*ringTransport, error) {
	if size <= 0 {
		return nil, nil
	}
	out, err := shmring.New(size)
	if errors.Is(err, errors.ErrUnsupported) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	in, err := shmring.New(size)
	if err != nil {
		_ = out.Close()
		return nil, err
	}
	return &ringTransport{out: out, in: in}, nil
}

// handshake sends the setup, with the rings' memfds when there are rings, and reads the
// hello, within the start timeout and ctx.
func (p *Process) handshake(ctx context.Context, uc *net.UnixConn, rings *ringTransport) error {
	// The setup: protocol version (4 bytes), 4 reserved, the rings' spin in nanoseconds (8).
	setup := binary.LittleEndian.AppendUint32(nil, protocolVersion)
	setup = binary.LittleEndian.AppendUint32(setup, 0)
	setup = binary.LittleEndian.AppendUint64(setup, uint64(p.cfg.ringSpin))
	var rights []byte
	if rings != nil {
		rings.setSpin(p.cfg.ringSpin)
		// The worker's request ring is our out, its response ring our in: in that order.
		rights = syscall.UnixRights(int(rings.out.File().Fd()), int(rings.in.File().Fd()))
	}
	if _, _, err := uc.WriteMsgUnix(appendFrame(nil, kindSetup, 0, 0, setup), rights, nil); err != nil {
		if errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET) {
			return fmt.Errorf("%w before reading its setup: does its main call worker.Main first thing?", errExited)
		}
		return fmt.Errorf("sending the setup: %w", err)
	}
	_ = uc.SetReadDeadline(time.Now().Add(p.cfg.startTimeout))
	stop := context.AfterFunc(ctx, func() { _ = uc.SetReadDeadline(time.Unix(1, 0)) })
	defer stop()
	buf := make([]byte, socketMaxFrame+1)
	n, err := uc.Read(buf)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("waiting for its hello: %w", ctx.Err())
		}
		if os.IsTimeout(err) {
			return fmt.Errorf("%w within %v; killed", errNoHello, p.cfg.startTimeout)
		}
		// EOF: the worker exited (or closed its socket) before saying hello, often a binary
		// that is not a worker at all.
		return fmt.Errorf("%w before saying hello: does its main call worker.Main first thing?", errExited)
	}
	f, err := parseFrame(buf[:n])
	if err != nil || f.kind != kindHello || len(f.payload) < 8 {
		return fmt.Errorf("its first message was not a hello (%d bytes)", n)
	}
	if v := binary.LittleEndian.Uint32(f.payload); v != protocolVersion {
		return fmt.Errorf("it speaks protocol version %d, this parent %d", v, protocolVersion)
	}
	if pid := int(binary.LittleEndian.Uint32(f.payload[4:])); pid != p.pid {
		return fmt.Errorf("its hello names pid %d", pid)
	}
	return uc.SetReadDeadline(time.Time{})
}
