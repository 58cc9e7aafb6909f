//go:build linux

package worker

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/gpuactor/gpuactor/internal/shmring"
)

// setupTimeout bounds the worker's wait for its parent's setup.
const setupTimeout = 30 * time.Second

// exitAfterGone is how long a worker whose parent is gone, or asked it to exit, gives its
// serve function to return before exiting anyway.
const exitAfterGone = 2 * time.Second

// Main runs the worker's role and exits when this process was started as a worker by Start;
// otherwise it returns at once. Call it first thing in main (and in TestMain, for a test
// binary that is its own worker), before anything that should not run in a worker.
//
// In a worker it connects to the parent, says hello, and runs serve with a context that ends
// when the parent calls Close or goes away; serve normally calls c.Serve. The process exits 0
// when serve returns nil, 1 with the error on standard error otherwise, and 2 when it was not
// started properly. serve is a function value, not a registry, so that a program holds no
// global state to name its worker roles; a program with several roles chooses among them
// inside serve (from an environment variable given with WithEnv, for instance).
func Main(serve func(ctx context.Context, c *Conn) error) {
	v, ok := os.LookupEnv(envVar)
	if !ok {
		return
	}
	os.Exit(runWorker(v, serve))
}

// runWorker is the worker's life; it returns the exit code.
func runWorker(version string, serve func(ctx context.Context, c *Conn) error) int {
	_ = os.Unsetenv(envVar) // this worker's own children are not workers unless it says so
	fail := func(format string, a ...any) int {
		fmt.Fprintf(os.Stderr, "gpuactor worker (pid %d): "+format+"\n", append([]any{os.Getpid()}, a...)...)
		return 2
	}
	if version != strconv.Itoa(protocolVersion) {
		return fail("the parent speaks protocol version %q, this binary %d", version, protocolVersion)
	}
	if serve == nil {
		return fail("worker.Main was given a nil serve function")
	}
	defer startProfile()()
	f := os.NewFile(controlFD, "worker-control")
	if f == nil {
		return fail("no control socket at fd %d", controlFD)
	}
	nc, err := net.FileConn(f)
	f.Close()
	uc, ok := nc.(*net.UnixConn)
	if err != nil || !ok {
		return fail("fd %d is not the control socket (%v): was this process started by worker.Start?", controlFD, err)
	}
	// The socket stays open until the process exits: the parent takes its EOF for the exit.
	ctl := &socketTransport{c: uc}

	_ = uc.SetReadDeadline(time.Now().Add(setupTimeout))
	buf := make([]byte, socketMaxFrame+1)
	oob := make([]byte, syscall.CmsgSpace(2*4))
	n, oobn, _, _, err := uc.ReadMsgUnix(buf, oob)
	if err != nil {
		return fail("reading the setup: %v", err)
	}
	data, err := openRings(oob[:oobn])
	if err != nil {
		return fail("%v", err)
	}
	setup, err := parseFrame(buf[:n])
	if err != nil || setup.kind != kindSetup || len(setup.payload) < 16 {
		return fail("the parent's first message is not a setup")
	}
	if v := binary.LittleEndian.Uint32(setup.payload); v != protocolVersion {
		return fail("the parent's setup is of protocol version %d, this binary %d", v, protocolVersion)
	}
	_ = uc.SetReadDeadline(time.Time{})
	c := newConn(ctl, ctl)
	if data != nil {
		data.setSpin(time.Duration(binary.LittleEndian.Uint64(setup.payload[8:])))
		c.data, c.direct = data, true
	}

	hello := binary.LittleEndian.AppendUint32(nil, protocolVersion)
	hello = binary.LittleEndian.AppendUint32(hello, uint32(os.Getpid()))
	if err := ctl.send(context.Background(), appendFrame(nil, kindHello, 0, 0, hello)); err != nil {
		return fail("sending the hello: %v", err)
	}
	go c.read(ctl, true)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- serve(ctx, c) }()
	select {
	case err = <-served:
	case <-c.gone:
		cancel()
		select {
		case err = <-served:
		case <-time.After(exitAfterGone):
			return fail("serve did not return within %v of the parent leaving", exitAfterGone)
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "gpuactor worker (pid %d): %v\n", os.Getpid(), err)
		return 1
	}
	return 0
}

// openRings maps the rings whose memfds came with the setup, if any: the first carries
// requests to this worker, the second its responses.
func openRings(oob []byte) (*ringTransport, error) {
	if len(oob) == 0 {
		return nil, nil
	}
	msgs, err := syscall.ParseSocketControlMessage(oob)
	if err != nil || len(msgs) != 1 {
		return nil, fmt.Errorf("the setup's control message is not readable (%v)", err)
	}
	fds, err := syscall.ParseUnixRights(&msgs[0])
	if err != nil {
		return nil, fmt.Errorf("the setup's descriptors: %v", err)
	}
	files := make([]*os.File, len(fds))
	for i, fd := range fds {
		files[i] = os.NewFile(uintptr(fd), "worker-ring")
		defer files[i].Close() // Open keeps a duplicate
	}
	if len(files) != 2 {
		return nil, fmt.Errorf("the setup carried %d descriptors, not the 2 rings", len(files))
	}
	in, err := shmring.Open(files[0])
	if err != nil {
		return nil, fmt.Errorf("mapping the request ring: %v", err)
	}
	out, err := shmring.Open(files[1])
	if err != nil {
		_ = in.Close()
		return nil, fmt.Errorf("mapping the response ring: %v", err)
	}
	// The worker's one hot goroutine is Serve, reading requests in order: nothing it would
	// yield to is waiting on this process's side of the rings.
	in.SetYield(false)
	out.SetYield(false)
	return &ringTransport{out: out, in: in}, nil
}
