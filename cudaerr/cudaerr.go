// Package cudaerr turns the CUDA runtime's cudaError_t codes into Go error values.
//
// Every code of the runtime's cudaError enum is a Code constant, and a Code is itself an
// error, so callers match with errors.Is:
//
//	if errors.Is(err, cudaerr.MemoryAllocation) { ... }
//
// Calls into the runtime return *Error, which adds the failing call's name and the runtime's
// own message to the code. Sticky codes (an illegal address, a failed launch…) leave the
// device's context unusable; IsSticky reports them.
package cudaerr

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
)

// Code is a cudaError_t value. It implements error so that it can be matched with errors.Is.
type Code int32

// Name is the enum identifier of the code, such as "cudaErrorMemoryAllocation".
func (c Code) Name() string {
	if n, ok := names[c]; ok {
		return n
	}
	return fmt.Sprintf("cudaError(%d)", int32(c))
}

// Message is a short human description derived from the code's name; the real runtime's
// cudaGetErrorString text is carried by *Error when a runtime produced the error.
func (c Code) Message() string {
	n, ok := names[c]
	if !ok {
		return "unrecognized error code"
	}
	if c == Success {
		return "no error"
	}
	return humanize(strings.TrimPrefix(n, "cudaError"))
}

// Error implements error.
func (c Code) Error() string { return fmt.Sprintf("%s (%d): %s", c.Name(), int32(c), c.Message()) }

// Known reports whether the code is one of the runtime's documented codes.
func (c Code) Known() bool { _, ok := names[c]; return ok }

// Sticky reports whether the code leaves the CUDA context corrupted: after it every later call
// on that device fails, and only a process restart recovers the device.
func (c Code) Sticky() bool {
	switch c {
	case ECCUncorrectable, NvlinkUncorrectable, Contained, IllegalAddress, LaunchTimeout,
		Assert, HardwareStackError, IllegalInstruction, MisalignedAddress,
		InvalidAddressSpace, InvalidPc, LaunchFailure, TensorMemoryLeak:
		return true
	}
	return false
}

// Codes lists every known code in ascending order.
func Codes() []Code {
	out := make([]Code, 0, len(names))
	for c := range names {
		out = append(out, c)
	}
	for i := 1; i < len(out); i++ { // small table: insertion sort keeps this dependency-free
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// Error is a failed runtime call: the call's name, the code, and the runtime's message.
type Error struct {
	Op      string // the runtime function that failed, e.g. "cudaMalloc"
	Code    Code
	Message string // the runtime's cudaGetErrorString text, or Code.Message()
}

// New returns the error for code c from call op, or nil for Success.
func New(op string, c Code) error {
	if c == Success {
		return nil
	}
	return &Error{Op: op, Code: c, Message: c.Message()}
}

// Error implements error.
func (e *Error) Error() string {
	msg := e.Message
	if msg == "" {
		msg = e.Code.Message()
	}
	if e.Op == "" {
		return fmt.Sprintf("%s (%d): %s", e.Code.Name(), int32(e.Code), msg)
	}
	return fmt.Sprintf("%s: %s (%d): %s", e.Op, e.Code.Name(), int32(e.Code), msg)
}

// Unwrap returns the Code, so errors.Is(err, cudaerr.X) matches.
func (e *Error) Unwrap() error { return e.Code }

// Sticky reports whether the error left the device unusable.
func (e *Error) Sticky() bool { return e.Code.Sticky() }

// CodeOf returns the runtime code carried by err, and whether there was one.
func CodeOf(err error) (Code, bool) {
	var c Code
	if errors.As(err, &c) {
		return c, true
	}
	return 0, false
}

// IsSticky reports whether err carries a sticky runtime code.
func IsSticky(err error) bool {
	c, ok := CodeOf(err)
	return ok && c.Sticky()
}

// acronyms the enum names spell in mixed case.
var acronyms = map[string]string{"Ptx": "PTX", "Pc": "PC", "Mps": "MPS", "Cdp": "CDP", "Jit": "JIT", "Nvlink": "NVLink", "Rpc": "RPC"}

// humanize turns "MemoryAllocation" into "memory allocation", keeping acronyms ("ECC", "PTX") whole.
func humanize(s string) string {
	var b strings.Builder
	r := []rune(s)
	for i, ch := range r {
		if i > 0 && unicode.IsUpper(ch) {
			prevLower := unicode.IsLower(r[i-1]) || unicode.IsDigit(r[i-1])
			nextLower := i+1 < len(r) && unicode.IsLower(r[i+1])
			if prevLower || (unicode.IsUpper(r[i-1]) && nextLower) {
				b.WriteByte(' ')
			}
		}
		b.WriteRune(ch)
	}
	words := strings.Fields(b.String())
	for i, w := range words {
		if a, ok := acronyms[w]; ok {
			words[i] = a
			continue
		}
		if len(w) > 1 && strings.ToUpper(w) == w {
			continue
		}
		words[i] = strings.ToLower(w)
	}
	return strings.Join(words, " ")
}
