package device

import (
	"context"

	"github.com/gpuactor/gpuactor/internal/backend"
)

// OpenOn opens device ordinal of be, for tests and benchmarks that wrap a backend.
func OpenOn(ctx context.Context, be backend.Backend, ordinal int, opts ...Option) (*Device, error) {
	return open(ctx, be, newConfig(opts), ordinal)
}
