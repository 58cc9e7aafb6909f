//go:build !windows

package cudart

import (
	"runtime"

	"github.com/ebitengine/purego"
)

// The dlopen modes the loader uses; rtldNoload is glibc's RTLD_NOLOAD (not a purego constant):
// dlopen only succeeds when the library is already in the process.
const (
	rtldNow    = purego.RTLD_NOW
	rtldGlobal = purego.RTLD_GLOBAL
	rtldNoload = 0x4
)

// dlopen is purego.Dlopen on one OS thread. On failure purego asks dlerror for the reason,
// a second call, and dlerror answers for the calling thread only: a goroutine moved to
// another thread in between would get an empty reason (or another thread's), and the load
// error would no longer say why a library did not open.
func dlopen(name string, mode int) (uintptr, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return purego.Dlopen(name, mode)
}

// dlsym is purego.Dlsym on one OS thread, for the same reason as dlopen.
func dlsym(handle uintptr, name string) (uintptr, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return purego.Dlsym(handle, name)
}
