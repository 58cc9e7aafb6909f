//go:build linux

package cudart

import (
	"testing"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/stretchr/testify/assert"
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

// TestFFIRepeatStopsAtTheFirstNonZeroResult repeats libc's sem_trywait, which returns 0 while
// the semaphore's count lasts and -1 after: the repeat stops there and says how far it got.
func TestFFIRepeatStopsAtTheFirstNonZeroResult(t *testing.T) {
	semInit := libcSym(t, "sem_init")
	semTrywait := libcSym(t, "sem_trywait")
	sem := new([8]uint64) // sem_t is 32 bytes on x86-64 glibc; room to spare
	initSem := func(count uintptr) {
		f := new(callFrame)
		f.fn = semInit
		f.w[0], f.w[1], f.w[2] = uintptr(unsafe.Pointer(sem)), 0, count
		require.Zero(t, int32(ffiCall(f)))
	}

	f := new(callFrame)
	f.fn = semTrywait
	f.w[0] = uintptr(unsafe.Pointer(sem))
	initSem(5)
	done, ret := ffiRepeat(f, 32)
	assert.Equal(t, 5, done, "calls that returned 0")
	assert.Equal(t, int32(-1), int32(ret), "the first that did not")

	initSem(40)
	done, ret = ffiRepeat(f, 32)
	assert.Equal(t, 32, done, "every call returned 0")
	assert.Zero(t, ret)
	done, ret = ffiRepeat(f, 32)
	assert.Equal(t, 8, done, "the count left")
	assert.Equal(t, int32(-1), int32(ret))

	for _, n := range []int{0, -3} {
		done, ret = ffiRepeat(f, n)
		assert.Zero(t, done, "%d calls", n)
		assert.Zero(t, ret, "%d calls", n)
	}
	_ = sem[0] // keep sem alive past the calls
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

func libcSym(tb testing.TB, name string) uintptr {
	libc, err := purego.Dlopen("libc.so.6", purego.RTLD_NOW)
	require.NoError(tb, err)
	fn, err := purego.Dlsym(libc, name)
	require.NoError(tb, err)
	return fn
}
