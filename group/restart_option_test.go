package group_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpuactor/gpuactor/group"
	"github.com/gpuactor/gpuactor/internal/testdev"
	"github.com/gpuactor/gpuactor/supervise"
)

// A health check that cannot work (a zero timeout fails every check, restarting healthy
// devices until the supervisor gives up) makes New fail, naming the option, and leaves the
// caller's devices open and usable.
func TestWithRestartRefusesABadHealthCheck(t *testing.T) {
	r, devs := newReopener(t, 2)
	_, err := group.New(t.Context(), devs, group.WithRestart(r.open, supervise.WithHealthCheck(time.Second, 0)))
	require.ErrorIs(t, err, supervise.ErrBadOption)
	require.ErrorContains(t, err, "WithHealthCheck")
	for _, d := range devs {
		require.NoError(t, d.Err())
		testdev.RequireUsable(t, d)
	}
}
