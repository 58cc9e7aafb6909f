package device

import (
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"go.uber.org/zap"

	"github.com/gpuactor/gpuactor/internal/backendsel"
	"github.com/gpuactor/gpuactor/internal/logging"
	"github.com/gpuactor/gpuactor/sim"
)

// BackendKind names a backend.
type BackendKind string

// The backends.
const (
	BackendAuto BackendKind = "auto" // cuda when libcudart loads and a device exists, else sim
	BackendCUDA BackendKind = "cuda" // the real runtime through purego
	BackendSim  BackendKind = "sim"  // the CPU simulator
)

// EnvBackend is the environment variable that picks the backend when no option does.
const EnvBackend = "GPUACTOR_BACKEND"

// EnvSimDevices is the environment variable that sets how many devices the sim backend
// simulates when no WithSimulator gives a machine of its own (default two), e.g.
// GPUACTOR_BACKEND=sim GPUACTOR_SIM_DEVICES=8. A value that is not a number from 1 to 1024
// fails Open with ErrBackend.
const EnvSimDevices = backendsel.EnvSimDevices

// Option configures Open, OpenAll and Count.
type Option func(*config)

type config struct {
	backend    BackendKind
	simulator  *sim.Simulator
	logger     *zap.Logger
	cacheDir   string      // "" = default; "-" = no cache
	cacheLimit int64       // WithKernelCacheLimit; 0: none
	tuning     ActorTuning // WithActorTuning
	memLimit   uint64      // WithMemoryLimit; 0 = none

	stagingLimit uint64        // WithStagingLimit; 0 = DefaultStagingLimit
	watchdog     time.Duration // WithWatchdog; 0 = none
	isolated     *isolation    // Isolated; nil = in process
	flags        *Flags        // WithFlags; nil = the context's own
}

func newConfig(opts []Option) *config {
	c := &config{backend: BackendKind(os.Getenv(EnvBackend)), logger: zap.NewNop()}
	if c.backend == "" {
		c.backend = BackendAuto
	}
	for _, o := range opts {
		o(c)
	}
	if c.simulator != nil && (c.backend == BackendAuto || c.backend == "") {
		c.backend = BackendSim
	}
	return c
}

// WithBackend picks the backend, overriding GPUACTOR_BACKEND.
func WithBackend(k BackendKind) Option { return func(c *config) { c.backend = k } }

// WithSimulator runs on the given simulator (package sim; it implies the sim backend), so
// that several Open calls share one simulated machine.
func WithSimulator(s *sim.Simulator) Option { return func(c *config) { c.simulator = s } }

// WithLogger sends the library's log lines (the backend chosen, a device failing or stuck, a
// kernel cache that cannot be written) to l; the default, and a nil l, discard them. A
// simulator logs through its own sim.WithLogger. A program that logs through zap passes slog.New of zap's slog handler
// (go.uber.org/zap/exp/zapslog): every package of the module takes a *slog.Logger.
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.logger = logging.Zap(l) } }

// WithKernelCache sets the directory of the compiled-kernel cache; "" disables caching.
// The default is gpuactor/kernels under os.UserCacheDir.
func WithKernelCache(dir string) Option {
	return func(c *config) {
		if dir == "" {
			dir = "-"
		}
		c.cacheDir = dir
	}
}

// WithKernelCacheLimit caps the compiled-kernel cache's size on disk: after each image it
// writes, the device removes the least recently used images (by last hit, as every process
// sharing the directory sees it) until the images take at most bytes. An image larger than
// the cap is not cached. 0, the default, sets no cap; a negative size is refused by Open.
// Device.Stats counts hits, misses, writes and evictions.
func WithKernelCacheLimit(bytes int64) Option {
	return func(c *config) { c.cacheLimit = bytes }
}

func (c *config) kernelCacheDir() string {
	switch c.cacheDir {
	case "-":
		return ""
	case "":
		base, err := os.UserCacheDir()
		if err != nil {
			return ""
		}
		return filepath.Join(base, "gpuactor", "kernels")
	}
	return c.cacheDir
}
