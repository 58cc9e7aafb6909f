package cudart

import (
	"path/filepath"
	"strconv"
	"strings"
)

// soVersion parses the numeric suffix of a shared-object file name:
// "libcudart.so.11.8.89" gives [11 8 89], "libcudart.so.13" gives [13], "libcudart.so" nil.
func soVersion(name string) []int {
	base := filepath.Base(name)
	i := strings.Index(base, ".so.")
	if i < 0 {
		return nil
	}
	var out []int
	for _, part := range strings.Split(base[i+len(".so."):], ".") {
		n, err := strconv.Atoi(part)
		if err != nil || n < 0 {
			return nil
		}
		out = append(out, n)
	}
	return out
}

// majorFromName is the major version in a file name (libcudart.so.11.0 → 11), 0 when absent.
func majorFromName(name string) int {
	if v := soVersion(name); len(v) > 0 {
		return v[0]
	}
	return 0
}

// versionFromNames derives a CUDA-encoded version (1000*major + 10*minor) from the library's
// file names, best first: a full "X.Y.Z" name (the real file behind the soname symlinks) gives
// major and minor; otherwise the first name with a version gives what it has (the soname
// libcudart.so.11.0 only reliably gives the major, 11000). 0 when no name carries a version.
func versionFromNames(names ...string) int {
	for _, n := range names {
		if v := soVersion(n); len(v) >= 3 {
			return v[0]*1000 + v[1]*10
		}
	}
	for _, n := range names {
		if v := soVersion(n); len(v) == 2 {
			return v[0]*1000 + v[1]*10
		} else if len(v) == 1 {
			return v[0] * 1000
		}
	}
	return 0
}
