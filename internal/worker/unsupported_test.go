//go:build !linux

package worker_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/internal/worker"
)

func TestStartUnsupported(t *testing.T) {
	_, err := worker.Start(context.Background())
	require.ErrorIs(t, err, worker.ErrStartFailed)
	require.ErrorIs(t, err, worker.ErrUnsupported)
}
