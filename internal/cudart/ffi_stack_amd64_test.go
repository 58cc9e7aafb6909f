//go:build linux && amd64

package cudart

import (
	"fmt"
	"strings"
	"testing"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stackCall puts its words on the stack in order after the six register words, as a by-value
// struct of class MEMORY travels: snprintf, variadic, reads its integer arguments past the
// format from the registers and then from the stack in the same order.
func TestStackCallPassesStackWordsInOrder(t *testing.T) {
	libc, err := purego.Dlopen("libc.so.6", purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		t.Skipf("no libc.so.6: %v", err)
	}
	snprintf, err := purego.Dlsym(libc, "snprintf")
	require.NoError(t, err)
	for _, n := range []int{0, 1, 2, 7, 35} {
		words := make([]uintptr, n)
		want := []string{"1", "2", "3"}
		for i := range words {
			words[i] = uintptr(100 + i)
			want = append(want, fmt.Sprint(100+i))
		}
		format := []byte(strings.Repeat("%ld ", 3+n) + "\x00")
		buf := make([]byte, 1024)
		got := stackCall(snprintf, [6]uintptr{uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), uintptr(unsafe.Pointer(&format[0])), 1, 2, 3}, words)
		out := string(buf[:got])
		assert.Equal(t, strings.Join(want, " ")+" ", out, "%d stack words", n)
	}
}
