//go:build !(linux && amd64)

package cudart

import (
	"unsafe"

	"github.com/ebitengine/purego"
)

// presentFrame calls cudaEGLStreamProducerPresentFrame(conn, *frame, stream). Elsewhere (arm64's
// AAPCS64) a composite of more than 16 bytes passed by value is copied by the caller and passed
// by address: frame is that copy.
func presentFrame(fn uintptr, conn *uintptr, frame *eglFrame, stream *uintptr) int32 {
	code, _, _ := purego.SyscallN(fn, uintptr(unsafe.Pointer(conn)), uintptr(unsafe.Pointer(frame)), uintptr(unsafe.Pointer(stream)))
	return int32(code)
}
