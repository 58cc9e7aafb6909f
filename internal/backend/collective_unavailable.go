package backend

import "errors"

// ErrCollUnavailable is matched (errors.Is) by the error of a collective call on a backend
// that has no NCCL to drive: the CUDA backend where no libnccl loads (its error lists every
// path tried).
var ErrCollUnavailable = errors.New("nccl: no NCCL library")
