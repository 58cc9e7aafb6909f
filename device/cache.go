package device

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// kernelCache stores compiled images on disk so that a program's second run skips NVRTC.
// An empty dir (or a nil cache) disables it. Writes are atomic (temp file + rename), so
// concurrent processes sharing the directory never read a torn image.
//
// With a limit, the cache keeps the images' total size under it by evicting the least
// recently used: a hit sets the image's modification time, so the directory's mtimes are
// the use order every process sharing it sees. An image another process removes while this
// one reads it is a miss, never an error.
type kernelCache struct {
	dir   string
	limit int64 // bytes; 0: no limit

	evictMu sync.Mutex // one eviction pass at a time in this process
	hits    atomic.Uint64
	misses  atomic.Uint64
	evicted atomic.Uint64
	writes  atomic.Uint64
}

// KernelCacheStats counts the compiled-kernel cache's work since the device opened
// (WithKernelCache, WithKernelCacheLimit): compilations answered from the cache (Hits), those
// that ran NVRTC (Misses), images written and images evicted to keep the cache under its
// limit.
type KernelCacheStats struct {
	Hits, Misses, Writes, Evictions uint64
}

func (c *kernelCache) stats() KernelCacheStats {
	if c == nil {
		return KernelCacheStats{}
	}
	return KernelCacheStats{Hits: c.hits.Load(), Misses: c.misses.Load(), Writes: c.writes.Load(), Evictions: c.evicted.Load()}
}

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

func (c *kernelCache) enabled() bool { return c != nil && c.dir != "" }

func (c *kernelCache) path(key string, kind ImageKind) string {
	ext := ".cubin"
	if kind == PTX {
		ext = ".ptx"
	}
	return filepath.Join(c.dir, key+ext)
}

// isImage reports whether a directory entry's name is a cached image's.
func isImage(name string) bool {
	return strings.HasSuffix(name, ".cubin") || strings.HasSuffix(name, ".ptx")
}

func (c *kernelCache) get(key string, kind ImageKind) ([]byte, bool) {
	if !c.enabled() {
		return nil, false
	}
	p := c.path(key, kind)
	b, err := os.ReadFile(p)
	if err != nil || len(b) == 0 {
		c.misses.Add(1)
		return nil, false
	}
	c.hits.Add(1)
	if c.limit > 0 {
		now := time.Now()
		_ = os.Chtimes(p, now, now) // the use order eviction goes by; a failure only ages it
	}
	return b, true
}

func (c *kernelCache) put(key string, kind ImageKind, image []byte) error {
	if !c.enabled() || len(image) == 0 {
		return nil
	}
	if c.limit > 0 && int64(len(image)) > c.limit {
		return nil // larger than the whole cache: not kept
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
	if err := os.Rename(f.Name(), c.path(key, kind)); err != nil {
		os.Remove(f.Name())
		return err
	}
	c.writes.Add(1)
	if c.limit > 0 {
		return c.evict(c.path(key, kind))
	}
	return nil
}

// evict removes the least recently used images until the cache's images fit its limit,
// never keep, the image just written.
func (c *kernelCache) evict(keep string) error {
	c.evictMu.Lock()
	defer c.evictMu.Unlock()
	entries, err := os.ReadDir(c.dir)
	if err != nil {
		return err
	}
	type image struct {
		path string
		size int64
		used time.Time
	}
	var imgs []image
	var total int64
	for _, e := range entries {
		if !e.Type().IsRegular() || !isImage(e.Name()) {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue // removed by another process since the listing
		}
		imgs = append(imgs, image{filepath.Join(c.dir, e.Name()), fi.Size(), fi.ModTime()})
		total += fi.Size()
	}
	if total <= c.limit {
		return nil
	}
	slices.SortFunc(imgs, func(a, b image) int { return a.used.Compare(b.used) })
	for _, img := range imgs {
		if total <= c.limit {
			break
		}
		if img.path == keep {
			continue
		}
		err := os.Remove(img.path)
		switch {
		case err == nil:
			c.evicted.Add(1)
			total -= img.size
		case errors.Is(err, fs.ErrNotExist):
			total -= img.size // another process evicted it first
		default:
			return err
		}
	}
	return nil
}
