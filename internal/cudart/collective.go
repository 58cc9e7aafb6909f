package cudart

import (
	"errors"
	"unsafe"

	"github.com/gpuactor/gpuactor/internal/backend"
	"github.com/gpuactor/gpuactor/internal/nccl"
)

// NCCL on the device's actor thread. libnccl is loaded on first use, once per process
// (nccl.Load); a comm handle belongs to the device whose thread made it. A non-blocking
// communicator's joining, splitting and finalizing return at once and the caller polls
// CollCommAsyncError rather than parking the thread on a missing peer; a blocking one
// (CommConfig.Blocking) has its operations queued on this thread at NCCL's own speed, and
// CollCommAbortAnyThread is the way out of a call parked on a peer.

func (d *device) CollVersion() (int, error) {
	l, err := nccl.Load()
	if err != nil {
		return 0, err
	}
	return l.Version()
}

func (d *device) CollUniqueID() (backend.CommID, error) {
	l, err := nccl.Load()
	if err != nil {
		return backend.CommID{}, err
	}
	return l.UniqueID()
}

// collConfig is cfg as an ncclConfig_t, blocking or not as cfg says. The net name's bytes are kept by the
// returned slice's owner until the call returns (NCCL copies the string while it parses the
// config, before the call returns).
func collConfig(cfg backend.CommConfig) *nccl.Config {
	c := nccl.NewConfig()
	c.Blocking = 0
	if cfg.Blocking {
		c.Blocking = 1
	}
	if cfg.CGAClusterSize != 0 {
		c.CGAClusterSize = cfg.CGAClusterSize
	}
	if cfg.MinCTAs != 0 {
		c.MinCTAs = cfg.MinCTAs
	}
	if cfg.MaxCTAs != 0 {
		c.MaxCTAs = cfg.MaxCTAs
	}
	if cfg.NetName != "" {
		b := append([]byte(cfg.NetName), 0)
		c.NetName = unsafe.SliceData(b)
	}
	if cfg.SplitShare {
		c.SplitShare = 1
	}
	return c
}

func (d *device) CollCommInitRank(nranks int, id backend.CommID, rank int, cfg backend.CommConfig) (backend.Comm, error) {
	l, err := nccl.Load()
	if err != nil {
		return 0, err
	}
	c, err := l.CommInitRank(nranks, id, rank, collConfig(cfg))
	if c != 0 && errors.Is(err, backend.ErrCollInProgress) {
		// Joining goes on in NCCL's background: the contract hands out the comm with no
		// error (a remote call carries no results beside an error) and CollCommAsyncError
		// says when it is done.
		err = nil
	}
	return c, err
}

func (d *device) CollCommAsyncError(c backend.Comm) error {
	l, err := nccl.Load()
	if err != nil {
		return err
	}
	if s, ok := d.splits[c]; ok && !s.done {
		return d.splitAsyncError(l, s)
	}
	return l.CommAsyncError(d.comm(c))
}

func (d *device) CollCommInfo(c backend.Comm) (count, rank, dev int, err error) {
	l, err := nccl.Load()
	if err != nil {
		return 0, 0, 0, err
	}
	if c = d.comm(c); c == 0 {
		return 0, 0, 0, errSplitPending
	}
	if count, err = l.CommCount(c); err != nil {
		return 0, 0, 0, err
	}
	if rank, err = l.CommUserRank(c); err != nil {
		return 0, 0, 0, err
	}
	if dev, err = l.CommCuDevice(c); err != nil {
		return 0, 0, 0, err
	}
	return count, rank, dev, nil
}

func (d *device) CollLaunch(c backend.Comm, s backend.Stream, ops []backend.CollOp) error {
	l, err := nccl.Load()
	if err != nil {
		return err
	}
	if c = d.comm(c); c == 0 {
		return errSplitPending
	}
	return l.Launch(c, s, ops)
}

func (d *device) CollCommFinalize(c backend.Comm) error {
	l, err := nccl.Load()
	if err != nil {
		return err
	}
	if c = d.comm(c); c == 0 {
		return errSplitPending
	}
	return l.CommFinalize(c)
}

func (d *device) CollCommDestroy(c backend.Comm) error {
	l, err := nccl.Load()
	if err != nil {
		return err
	}
	h := d.comm(c)
	if h == 0 {
		return errSplitPending
	}
	defer d.forget(c)
	return l.CommDestroy(h)
}

func (d *device) CollCommAbort(c backend.Comm) error {
	l, err := nccl.Load()
	if err != nil {
		return err
	}
	h := d.comm(c)
	if h == 0 {
		// A split still in progress is the parent's work: it stops when the parent is
		// aborted, and NCCL frees the half-made comm then.
		return nil
	}
	defer d.forget(c)
	return l.CommAbort(h)
}

// errSplitPending answers a call on a comm whose split has not finished.
var errSplitPending = &backend.CollError{Code: backend.CollInvalidUsage, Call: "nccl", Detail: "the communicator is still being split from its parent"}
