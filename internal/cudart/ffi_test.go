package cudart

import (
	"testing"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/stretchr/testify/require"
)

// TestFFICallStackArguments checks the trampoline against libc: snprintf with eleven integer
// words puts the last five on the stack, the layout cuLaunchKernel's arguments take.
func TestFFICallStackArguments(t *testing.T) {
	libc, err := purego.Dlopen("libc.so.6", purego.RTLD_NOW)
	require.NoError(t, err)
	snprintf, err := purego.Dlsym(libc, "snprintf")
	require.NoError(t, err)
	strlen, err := purego.Dlsym(libc, "strlen")
	require.NoError(t, err)

	buf := make([]byte, 64)
	format := []byte("%d %d %d %d %d %d %d %d\x00")
	f := new(callFrame)
	f.fn = snprintf
	f.w = [12]uintptr{uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), uintptr(unsafe.Pointer(&format[0])),
		1, 2, 3, 4, 5, 6, 7, 8, 0xdead}
	n := ffiCall(f)
	require.Equal(t, "1 2 3 4 5 6 7 8", string(buf[:n]))

	g := new(callFrame)
	g.fn = strlen
	g.w[0] = uintptr(unsafe.Pointer(&buf[0]))
	require.Equal(t, uintptr(15), ffiCall(g))
	_ = buf[0] // keep buf and format alive past the calls
	_ = format[0]
}

// BenchmarkFFICall and BenchmarkPuregoSyscallN compare the two ways into C on a trivial
// function (labs), i.e. the binding's fixed cost per call.
func BenchmarkFFICall(b *testing.B) {
	labs := libcSym(b, "labs")
	f := new(callFrame)
	f.fn = labs
	f.w[0] = uintptr(7)
	for b.Loop() {
		ffiCall(f)
	}
}

func BenchmarkPuregoSyscallN(b *testing.B) {
	labs := libcSym(b, "labs")
	args := []uintptr{7}
	for b.Loop() {
		purego.SyscallN(labs, args...)
	}
}

func libcSym(b *testing.B, name string) uintptr {
	libc, err := purego.Dlopen("libc.so.6", purego.RTLD_NOW)
	require.NoError(b, err)
	fn, err := purego.Dlsym(libc, name)
	require.NoError(b, err)
	return fn
}
