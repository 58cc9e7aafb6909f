package device

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
)

// kernelCache stores compiled images on disk so that a program's second run skips NVRTC.
// An empty dir disables it. Writes are atomic (temp file + rename), so concurrent processes
// sharing the directory never read a torn image.
type kernelCache struct{ dir string }

func cacheKey(name, code string, options []string, arch, compiler string) string {
	h := sha256.New()
	write := func(s string) { h.Write([]byte(s)); h.Write([]byte{0}) }
	write("gpuactor kernel cache v1")
	write(name)
	write(code)
	for _, o := range options {
		write(o)
	}
	write(arch)
	write(compiler)
	return hex.EncodeToString(h.Sum(nil))
}

func (c kernelCache) path(key string, kind ImageKind) string {
	ext := ".cubin"
	if kind == PTX {
		ext = ".ptx"
	}
	return filepath.Join(c.dir, key+ext)
}

func (c kernelCache) get(key string, kind ImageKind) ([]byte, bool) {
	if c.dir == "" {
		return nil, false
	}
	b, err := os.ReadFile(c.path(key, kind))
	if err != nil || len(b) == 0 {
		return nil, false
	}
	return b, true
}

func (c kernelCache) put(key string, kind ImageKind, image []byte) error {
	if c.dir == "" || len(image) == 0 {
		return nil
	}
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(c.dir, key+".*.tmp")
	if err != nil {
		return err
	}
	if _, err := f.Write(image); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return err
	}
	return os.Rename(f.Name(), c.path(key, kind))
}
