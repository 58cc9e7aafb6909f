//go:build !linux

package device_test

import (
	"testing"

	"github.com/gpuactor/gpuactor/device"
)

// isolatedBackends skips: isolated devices are worker processes over shared memory, which
// gpuactor provides on Linux only.
func isolatedBackends(t *testing.T, _ func(t *testing.T, opts []device.Option)) {
	t.Skip("isolated devices run on Linux only")
}
