package clib

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
)

func TestGoString(t *testing.T) {
	b := []byte("libnccl\x00tail")
	assert.Equal(t, "libnccl", GoString(uintptr(unsafe.Pointer(&b[0]))))
	assert.Equal(t, "", GoString(0))
}

func TestVersions(t *testing.T) {
	assert.Equal(t, []int{12, 10}, Digits("/usr/local/cuda-12.10"))
	assert.Equal(t, []int(nil), Digits("none"))
	assert.Positive(t, CompareVersions(Digits("python3.12"), Digits("python3.9")))
	assert.Negative(t, CompareVersions([]int{3}, []int{3, 1}))
	assert.Zero(t, CompareVersions([]int{2, 28}, []int{2, 28}))
}
