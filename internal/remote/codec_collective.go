package remote

import (
	"errors"
	"strings"

	"github.com/gpuactor/gpuactor/internal/backend"
)

// Wire codes of the collective errors, above every cudaerr code and codeGeneric: an NCCL
// result crosses as codeColl plus its ncclResult_t, ErrCollInProgress as codeCollInProgress.
const (
	codeCollInProgress int64 = 1 << 41
	codeColl           int64 = 1 << 42
)

// encodeColl encodes a *backend.CollError (call, detail and the full text, NUL separated) or
// backend.ErrCollInProgress (the full text), so that the parent matches them with errors.As
// and errors.Is as it would in process.
func encodeColl(err error) (int64, string, bool) {
	if ce, ok := errors.AsType[*backend.CollError](err); ok {
		return codeColl + int64(uint32(ce.Code)), ce.Call + "\x00" + ce.Detail + "\x00" + err.Error(), true
	}
	if errors.Is(err, backend.ErrCollInProgress) {
		return codeCollInProgress, err.Error(), true
	}
	return 0, "", false
}

// decodeColl is encodeColl's inverse.
func decodeColl(code int64, msg string) (error, bool) {
	switch {
	case code == codeCollInProgress:
		if msg == backend.ErrCollInProgress.Error() {
			return backend.ErrCollInProgress, true
		}
		return &Error{text: msg, err: backend.ErrCollInProgress}, true
	case code >= codeColl && code < codeColl+1<<32:
		parts := strings.SplitN(msg, "\x00", 3)
		if len(parts) != 3 {
			return &Error{text: msg}, true
		}
		ce := &backend.CollError{Code: int32(uint32(code - codeColl)), Call: parts[0], Detail: parts[1]}
		if parts[2] == ce.Error() {
			return ce, true
		}
		return &Error{text: parts[2], err: ce}, true
	}
	return nil, false
}
