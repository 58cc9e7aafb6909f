package collective

import (
	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/core"
)

// Option configures the communicator Join, NewLocal or Split makes (NCCL's ncclConfig_t).
// Communicators are blocking, NCCL's default, unless WithNonBlocking is given.
type Option func(*config)

type config struct {
	cfg         backend.CommConfig
	nonBlocking bool
	err         error
}

// WithCTAs bounds the number of CTAs (thread blocks) NCCL's kernels use, min to max: fewer
// leave more of the GPU to the kernels that run beside the collectives.
func WithCTAs(minCTAs, maxCTAs int) Option {
	return func(c *config) {
		if minCTAs < 1 || maxCTAs < minCTAs || maxCTAs > 1<<16 {
			c.fail(core.Invalid("collective: WithCTAs(%d, %d): need 1 <= min <= max", minCTAs, maxCTAs))
			return
		}
		c.cfg.MinCTAs, c.cfg.MaxCTAs = int32(minCTAs), int32(maxCTAs)
	}
}

// WithClusterSize sets the CGA cluster size of NCCL's kernels on sm_90 and later (1 to 8).
func WithClusterSize(n int) Option {
	return func(c *config) {
		if n < 1 || n > 8 {
			c.fail(core.Invalid("collective: WithClusterSize(%d): need 1 to 8", n))
			return
		}
		c.cfg.CGAClusterSize = int32(n)
	}
}

// WithNetName names the network transport or plugin NCCL uses between hosts ("Socket",
// "IB", a plugin's name); NCCL_NET in the environment overrides it.
func WithNetName(name string) Option {
	return func(c *config) {
		for i := 0; i < len(name); i++ {
			if name[i] == 0 {
				c.fail(core.Invalid("collective: WithNetName(%q): a NUL byte", name))
				return
			}
		}
		c.cfg.NetName = name
	}
}

// WithSplitShare makes the communicators Split makes share their parent's resources
// (buffers, connections): cheaper to make, but the parent and the child then must not run
// operations at the same time.
func WithSplitShare() Option { return func(c *config) { c.cfg.SplitShare = true } }

// WithNonBlocking makes the communicator non-blocking (ncclConfig_t.blocking = 0): no NCCL
// call parks the device's actor, so a Join or an operation waiting for a slow or missing
// peer leaves the device serving other work and can be cancelled through its ctx at any
// time. The price is speed: NCCL launches every operation of a non-blocking communicator
// from a thread it creates for it, and the actor polls until that thread has queued the
// kernel, tens of microseconds an operation (a 1 MiB all-reduce takes about nine times as
// long as NCCL's own loop; bench/results/FINDINGS.md). Without it the communicator is blocking: operations
// are queued on the actor's thread at NCCL's speed, a Join parks the actor until every
// rank has joined (see Join), and Abort or a ctx's end frees an operation parked on a peer
// by aborting the communicator from another goroutine.
func WithNonBlocking() Option { return func(c *config) { c.nonBlocking = true } }

func (c *config) fail(err error) {
	if c.err == nil {
		c.err = err
	}
}

func configOf(opts []Option) (backend.CommConfig, error) {
	var c config
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	c.cfg.Blocking = !c.nonBlocking
	return c.cfg, c.err
}
