package cudart

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gpuactor/gpuactor/internal/clib"
)

func TestSoVersion(t *testing.T) {
	assert.Equal(t, []int{11, 8, 89}, soVersion("/usr/lib/x86_64-linux-gnu/libcudart.so.11.8.89"))
	assert.Equal(t, []int{13}, soVersion("libcudart.so.13"))
	assert.Equal(t, []int{11, 0}, soVersion("libcudart.so.11.0"))
	assert.Nil(t, soVersion("libcudart.so"))
	assert.Nil(t, soVersion("libcudart.so.13.x"))
	assert.Nil(t, soVersion("/opt/custom/cudart.dll"))
}

func TestVersionFromNames(t *testing.T) {
	// The real file behind the soname gives major and minor.
	assert.Equal(t, 11080, versionFromNames("/usr/lib/x86_64-linux-gnu/libcudart.so.11.8.89", "libcudart.so.11.0"))
	assert.Equal(t, 13000, versionFromNames("/usr/local/cuda-13.0/lib64/libcudart.so.13.0.96", "libcudart.so.13"))
	// A full version wins over an earlier partial one.
	assert.Equal(t, 12080, versionFromNames("libcudart.so.12", "libcudart.so.12.8.90"))
	// Only sonames: what they carry.
	assert.Equal(t, 13000, versionFromNames("/venv/nvidia/cu13/lib/libcudart.so.13"))
	assert.Equal(t, 11000, versionFromNames("", "libcudart.so.11.0"))
	assert.Equal(t, 11080, versionFromNames("libnvrtc-builtins.so.11.8"))
	assert.Equal(t, 0, versionFromNames("libcudart.so", "/tmp/x.so"))
}

func TestMajorFromName(t *testing.T) {
	assert.Equal(t, 11, majorFromName("libcudart.so.11.0"))
	assert.Equal(t, 13, majorFromName("/usr/local/cuda/lib64/libcudart.so.13"))
	assert.Equal(t, 12, majorFromName("libnvrtc.so.12"))
	assert.Equal(t, 0, majorFromName("libcudart.so"))
}

func TestFormatVersion(t *testing.T) {
	assert.Equal(t, "11.8", FormatVersion(11080))
	assert.Equal(t, "13.0", FormatVersion(13000))
	assert.Equal(t, "12.10", FormatVersion(12100))
	assert.Equal(t, "unknown", FormatVersion(0))
}

func TestDigitsAndCompare(t *testing.T) {
	assert.Equal(t, []int{12, 10}, clib.Digits("/usr/local/cuda-12.10"))
	assert.Positive(t, clib.CompareVersions([]int{12, 10}, []int{12, 9}))
	assert.Negative(t, clib.CompareVersions([]int{11, 8}, []int{12}))
	assert.Zero(t, clib.CompareVersions([]int{13, 0}, []int{13, 0}))
}
