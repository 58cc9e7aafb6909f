//go:build !windows

package cudart

import (
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/gpuactor/gpuactor/internal/clib"
)

// rtldDiLinkmap is glibc's RTLD_DI_LINKMAP request for dlinfo.
const rtldDiLinkmap = 2

var dlinfoAddr = sync.OnceValue(func() uintptr {
	p, err := dlsym(purego.RTLD_DEFAULT, "dlinfo")
	if err != nil {
		return 0
	}
	return p
})

// handlePath returns the file a dlopen handle refers to (glibc's link_map l_name), or "" when
// it cannot be told. It is how a library opened by soname learns its real path.
func handlePath(handle uintptr) string {
	fn := dlinfoAddr()
	if fn == 0 || handle == 0 {
		return ""
	}
	var lm unsafe.Pointer // struct link_map *
	r, _, _ := purego.SyscallN(fn, handle, rtldDiLinkmap, uintptr(unsafe.Pointer(&lm)))
	if int32(r) != 0 || lm == nil {
		return ""
	}
	// struct link_map { ElfW(Addr) l_addr; char *l_name; ... }: l_name is the second word.
	return clib.GoString(*(*uintptr)(unsafe.Add(lm, unsafe.Sizeof(uintptr(0)))))
}
