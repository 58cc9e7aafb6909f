package device

import (
	"time"

	"os"
	"path/filepath"

	"go.uber.org/zap"
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

// Option configures Open, OpenAll and Count.
type Option func(*config)

type config struct {
	backend   BackendKind
	simulator *Simulator
	logger    *zap.Logger
	cacheDir  string      // "" = default; "-" = no cache
	tuning    ActorTuning // WithActorTuning
	memLimit  uint64      // WithMemoryLimit; 0 = none

	stagingLimit uint64        // WithStagingLimit; 0 = DefaultStagingLimit
	watchdog     time.Duration // WithWatchdog; 0 = none
	isolated     *isolation    // Isolated; nil = in process
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

// WithSimulator runs on the given simulator (and implies the sim backend), so that several
// Open calls share one simulated machine.
func WithSimulator(s *Simulator) Option { return func(c *config) { c.simulator = s } }

// WithLogger sets the structured logger; the default discards everything.
func WithLogger(l *zap.Logger) Option {
	return func(c *config) {
		if l != nil {
			c.logger = l
		}
	}
}

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
