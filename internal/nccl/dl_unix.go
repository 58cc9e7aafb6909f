//go:build !windows

package nccl

import (
	"runtime"

	"github.com/ebitengine/purego"
)

// rtldNoload is glibc's RTLD_NOLOAD: dlopen succeeds only for a library already loaded.
const rtldNoload = 0x4

// dlopen opens name on one OS thread, so that purego's dlerror reads this call's reason.
// The library is opened RTLD_LOCAL: its symbols are reached through dlsym only, and cannot
// clash with another copy in the process (PyTorch's, say).
func dlopen(name string, noload bool) (uintptr, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	mode := purego.RTLD_NOW | purego.RTLD_LOCAL
	if noload {
		mode |= rtldNoload
	}
	return purego.Dlopen(name, mode)
}

// dlsym resolves name on one OS thread, for the same reason as dlopen.
func dlsym(handle uintptr, name string) (uintptr, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return purego.Dlsym(handle, name)
}
