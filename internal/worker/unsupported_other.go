//go:build !linux

package worker

import (
	"context"
	"fmt"
	"os"
)

// Main returns at once where worker processes are not supported, unless this process was
// started as a worker, which cannot happen through Start; then it exits 2 saying why.
func Main(serve func(ctx context.Context, c *Conn) error) {
	if _, ok := os.LookupEnv(envVar); ok {
		fmt.Fprintln(os.Stderr, "gpuactor worker:", ErrUnsupported)
		os.Exit(2)
	}
}

// Start fails with ErrUnsupported: worker processes need Linux (Pdeathsig, SOCK_SEQPACKET).
func Start(ctx context.Context, opts ...Option) (*Process, error) {
	return nil, fmt.Errorf("%w: %w", ErrStartFailed, ErrUnsupported)
}
