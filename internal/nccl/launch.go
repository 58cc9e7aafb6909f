package nccl

import (
	"errors"

	"github.com/gpuactor/gpuactor/internal/backend"
)

// Launch issues ops on c and stream s from the calling thread: one op as a plain call,
// several between ncclGroupStart and ncclGroupEnd, so that NCCL fuses them into one launch
// (and matches the sends and receives among them, which must be grouped). When an op is
// refused inside the group the group is still ended (NCCL discards what it held) and the
// op's error is returned.
func (l *Lib) Launch(c backend.Comm, s backend.Stream, ops []backend.CollOp) error {
	switch len(ops) {
	case 0:
		return nil
	case 1:
		return l.Op(c, s, ops[0])
	}
	if err := l.GroupStart(); err != nil {
		return err
	}
	var refused error
	for _, op := range ops {
		if err := l.Op(c, s, op); err != nil && !errors.Is(err, backend.ErrCollInProgress) {
			refused = err
			break
		}
	}
	end := l.GroupEnd(c)
	if refused != nil {
		return refused
	}
	return end
}
