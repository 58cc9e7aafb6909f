//go:build !amd64 && !arm64

package nccl

import "github.com/gpuactor/gpuactor/internal/backend"

// initRank is unsupported where the way a 128-byte struct is passed by value was not worked
// out (NCCL ships for x86_64 and aarch64 only).
func initRank(uintptr, *backend.Comm, int, *backend.CommID, int, *Config) uintptr {
	return 5 // ncclInvalidUsage
}
