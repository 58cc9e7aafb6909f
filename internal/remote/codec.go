package remote

import (
	"errors"
	"strings"

	"github.com/gpuactor/gpuactor/cudaerr"
)

// codeGeneric is the wire code of an error that carries no cudaerr code; cudaerr codes are
// int32, so it never collides with one.
const codeGeneric int64 = 1 << 40

// Codec carries a device call's error from the worker to the parent so that it matches in
// the parent as it would in process: an error holding a cudaerr code comes back as a
// *cudaerr.Error with the same code, operation and message (errors.Is(err, cudaerr.X) and
// errors.As(err, **cudaerr.Error) hold), wrapped in the worker's full text when the worker's
// error added context; any other error comes back with its text only. Start sets it on both
// sides; a process started otherwise must use worker.WithErrorCodec(Codec{}).
type Codec struct{}

// Encode implements worker.ErrorCodec: the code, then op, message and the full text, NUL
// separated.
func (Codec) Encode(err error) (int64, string) {
	if code, text, ok := encodeColl(err); ok { // codec_collective.go
		return code, text
	}
	if ce, ok := errors.AsType[*cudaerr.Error](err); ok {
		return int64(ce.Code), ce.Op + "\x00" + ce.Message + "\x00" + err.Error()
	}
	if c, ok := cudaerr.CodeOf(err); ok {
		return int64(c), "\x00" + c.Message() + "\x00" + err.Error()
	}
	return codeGeneric, err.Error()
}

// Decode implements worker.ErrorCodec.
func (Codec) Decode(code int64, msg string) error {
	if err, ok := decodeColl(code, msg); ok {
		return err
	}
	if code == codeGeneric || code <= 0 || code > 1<<31-1 {
		return &Error{text: msg}
	}
	parts := strings.SplitN(msg, "\x00", 3)
	if len(parts) != 3 {
		return &Error{text: msg, err: cudaerr.Code(code)}
	}
	ce := &cudaerr.Error{Op: parts[0], Code: cudaerr.Code(code), Message: parts[1]}
	if parts[2] == ce.Error() {
		return ce
	}
	return &Error{text: parts[2], err: ce}
}

// Error is an error of the worker's device that carried context of its own: its text is the
// worker's, and it wraps the *cudaerr.Error or cudaerr.Code it held, if any.
type Error struct {
	text string
	err  error
}

// Error is the worker's text.
func (e *Error) Error() string { return e.text }

// Unwrap is the CUDA error the worker's error held, or nil.
func (e *Error) Unwrap() error { return e.err }
