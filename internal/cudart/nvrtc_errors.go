package cudart

import (
	"errors"
	"fmt"
)

// NVRTCResult is an nvrtcResult code. It is an error, so errors.Is(err, NVRTCErrorCompilation)
// matches any error carrying that code.
type NVRTCResult int32

// nvrtcResult values (identical in NVRTC 11.x–13.0 for the codes they share).
const (
	NVRTCSuccess                                NVRTCResult = 0
	NVRTCErrorOutOfMemory                       NVRTCResult = 1
	NVRTCErrorProgramCreationFailure            NVRTCResult = 2
	NVRTCErrorInvalidInput                      NVRTCResult = 3
	NVRTCErrorInvalidProgram                    NVRTCResult = 4
	NVRTCErrorInvalidOption                     NVRTCResult = 5
	NVRTCErrorCompilation                       NVRTCResult = 6
	NVRTCErrorBuiltinOperationFailure           NVRTCResult = 7
	NVRTCErrorNoNameExpressionsAfterCompilation NVRTCResult = 8
	NVRTCErrorNoLoweredNamesBeforeCompilation   NVRTCResult = 9
	NVRTCErrorNameExpressionNotValid            NVRTCResult = 10
	NVRTCErrorInternalError                     NVRTCResult = 11
	NVRTCErrorTimeFileWriteFailed               NVRTCResult = 12
	NVRTCErrorNoPCHCreateAttempted              NVRTCResult = 13
	NVRTCErrorPCHCreateHeapExhausted            NVRTCResult = 14
	NVRTCErrorPCHCreate                         NVRTCResult = 15
	NVRTCErrorCancelled                         NVRTCResult = 16
	NVRTCErrorTimeTraceFileWriteFailed          NVRTCResult = 17
)

var nvrtcNames = map[NVRTCResult]string{
	NVRTCSuccess:                                "NVRTC_SUCCESS",
	NVRTCErrorOutOfMemory:                       "NVRTC_ERROR_OUT_OF_MEMORY",
	NVRTCErrorProgramCreationFailure:            "NVRTC_ERROR_PROGRAM_CREATION_FAILURE",
	NVRTCErrorInvalidInput:                      "NVRTC_ERROR_INVALID_INPUT",
	NVRTCErrorInvalidProgram:                    "NVRTC_ERROR_INVALID_PROGRAM",
	NVRTCErrorInvalidOption:                     "NVRTC_ERROR_INVALID_OPTION",
	NVRTCErrorCompilation:                       "NVRTC_ERROR_COMPILATION",
	NVRTCErrorBuiltinOperationFailure:           "NVRTC_ERROR_BUILTIN_OPERATION_FAILURE",
	NVRTCErrorNoNameExpressionsAfterCompilation: "NVRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION",
	NVRTCErrorNoLoweredNamesBeforeCompilation:   "NVRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION",
	NVRTCErrorNameExpressionNotValid:            "NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID",
	NVRTCErrorInternalError:                     "NVRTC_ERROR_INTERNAL_ERROR",
	NVRTCErrorTimeFileWriteFailed:               "NVRTC_ERROR_TIME_FILE_WRITE_FAILED",
	NVRTCErrorNoPCHCreateAttempted:              "NVRTC_ERROR_NO_PCH_CREATE_ATTEMPTED",
	NVRTCErrorPCHCreateHeapExhausted:            "NVRTC_ERROR_PCH_CREATE_HEAP_EXHAUSTED",
	NVRTCErrorPCHCreate:                         "NVRTC_ERROR_PCH_CREATE",
	NVRTCErrorCancelled:                         "NVRTC_ERROR_CANCELLED",
	NVRTCErrorTimeTraceFileWriteFailed:          "NVRTC_ERROR_TIME_TRACE_FILE_WRITE_FAILED",
}

// Name is the code's identifier, e.g. "NVRTC_ERROR_COMPILATION".
func (c NVRTCResult) Name() string {
	if n, ok := nvrtcNames[c]; ok {
		return n
	}
	return fmt.Sprintf("nvrtcResult(%d)", int32(c))
}

// Error implements error.
func (c NVRTCResult) Error() string { return fmt.Sprintf("%s (%d)", c.Name(), int32(c)) }

// NVRTCError is a failed NVRTC call.
type NVRTCError struct {
	Op      string // e.g. "nvrtcCreateProgram"
	Code    NVRTCResult
	Message string // nvrtcGetErrorString's text
}

// Error implements error.
func (e *NVRTCError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = e.Code.Name()
	}
	return fmt.Sprintf("%s: %s (%d)", e.Op, msg, int32(e.Code))
}

// Unwrap returns the code.
func (e *NVRTCError) Unwrap() error { return e.Code }

// ErrCompile is wrapped by every *CompileError.
var ErrCompile = errors.New("nvrtc compilation failed")

// CompileError is a program NVRTC refused to compile, with NVRTC's full log.
type CompileError struct {
	Name string // the program's name (the file name in the log's messages)
	Code NVRTCResult
	Log  string
}

// Error implements error: the first line says what failed, the rest is NVRTC's log.
func (e *CompileError) Error() string {
	s := fmt.Sprintf("nvrtc: compiling %s failed: %s", e.Name, e.Code.Name())
	if e.Log != "" {
		s += "\n" + e.Log
	}
	return s
}

// Unwrap returns ErrCompile and the code, so both errors.Is(err, ErrCompile) and
// errors.Is(err, NVRTCErrorCompilation) match.
func (e *CompileError) Unwrap() []error { return []error{ErrCompile, e.Code} }
