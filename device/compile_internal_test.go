package device

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPickArch(t *testing.T) {
	arch, kind, err := pickArch(90, []int{75, 80, 86, 89, 90}, false)
	require.NoError(t, err)
	assert.Equal(t, "sm_90", arch)
	assert.Equal(t, Cubin, kind)
	arch, kind, err = pickArch(100, []int{75, 80, 90}, false)
	require.NoError(t, err)
	assert.Equal(t, "compute_90", arch)
	assert.Equal(t, PTX, kind)
	arch, kind, err = pickArch(90, []int{80, 90}, true)
	require.NoError(t, err)
	assert.Equal(t, "compute_90", arch)
	assert.Equal(t, PTX, kind)
	_, _, err = pickArch(50, []int{75, 80}, false)
	assert.ErrorContains(t, err, "no supported architecture")
}

func TestKernelCache(t *testing.T) {
	c := &kernelCache{dir: t.TempDir()}
	k1 := cacheKey("a.cu", "code", []string{"-O3"}, "sm_90", "nvrtc 13.0")
	k2 := cacheKey("a.cu", "code", []string{"-O3"}, "sm_80", "nvrtc 13.0")
	k3 := cacheKey("a.cu", "code2", []string{"-O3"}, "sm_90", "nvrtc 13.0")
	assert.NotEqual(t, k1, k2)
	assert.NotEqual(t, k1, k3)
	_, ok := c.get(k1, Cubin)
	assert.False(t, ok)
	require.NoError(t, c.put(k1, Cubin, []byte("image")))
	b, ok := c.get(k1, Cubin)
	require.True(t, ok)
	assert.Equal(t, "image", string(b))
	_, ok = c.get(k1, PTX)
	assert.False(t, ok, "PTX and cubin are cached apart")
	off := &kernelCache{}
	require.NoError(t, off.put(k1, Cubin, []byte("x")))
	_, ok = off.get(k1, Cubin)
	assert.False(t, ok)
}

func TestToolkitHeadersFindsTheToolkit(t *testing.T) {
	root := t.TempDir()
	inc := filepath.Join(root, "include")
	require.NoError(t, os.MkdirAll(filepath.Join(inc, "cccl"), 0o755))
	t.Setenv("CUDA_HOME", root)
	t.Setenv("CUDA_PATH", "")

	var c compileConfig
	ToolkitHeaders()(&c)
	if _, err := os.Stat("/usr/local/cuda/include/cooperative_groups.h"); err != nil {
		assert.Empty(t, c.options, "no cooperative_groups.h under CUDA_HOME, and no toolkit elsewhere")
	}

	require.NoError(t, os.WriteFile(filepath.Join(inc, "cooperative_groups.h"), nil, 0o644))
	c = compileConfig{}
	ToolkitHeaders()(&c)
	assert.Equal(t, []string{"-I" + inc, "-I" + filepath.Join(inc, "cccl")}, c.options)
}
