// Package worker runs a piece of a program in a child process of its own and talks to it by
// request and response: the process model under isolated devices, where a GPU that took a
// sticky fault can only come back in a new process (docs/faults.md, docs/design/worker.md).
//
// The worker is the program's own binary, started again with an environment variable that
// tells Main to run the worker's role instead of the program:
//
//	func main() {
//		worker.Main(serve) // returns at once unless this process is a worker
//		... // the program
//	}
//
//	func serve(ctx context.Context, c *worker.Conn) error {
//		return c.Serve(ctx, func(ctx context.Context, req []byte) ([]byte, error) { ... })
//	}
//
// The parent starts one with Start, calls it with Call, and learns of its death through Done
// and Err. A worker that dies, for any reason, fails every pending call with ErrWorkerDied;
// one that stops answering heartbeats is killed and reported with ErrWorkerHung. A worker
// never outlives its parent: it gets SIGKILL when the parent dies, and exits when its control
// socket reads EOF. A *Process is a supervise.Child, so a supervisor restarts it.
//
// Calls travel through two shared-memory rings (internal/shmring) whose memfds the parent
// passes over a Unix control socket; the socket also carries the handshake, heartbeats and
// the exit request, and its EOF tells each side the other is gone. docs/design/worker.md
// explains the design.
//
// The package is independent of CUDA and works on Linux only; elsewhere Start fails with
// ErrUnsupported.
package worker
