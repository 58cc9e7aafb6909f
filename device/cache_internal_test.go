package device

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cachedKeys lists the keys whose images are in dir.
func cachedKeys(t *testing.T, dir string) map[string]bool {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	keys := map[string]bool{}
	for _, e := range entries {
		if isImage(e.Name()) {
			keys[e.Name()[:len(e.Name())-len(filepath.Ext(e.Name()))]] = true
		}
	}
	return keys
}

// age sets key's image's last use to d ago, so the test sets the use order rather than
// relying on the file system's timestamp resolution.
func age(t *testing.T, c *kernelCache, key string, d time.Duration) {
	t.Helper()
	when := time.Now().Add(-d)
	require.NoError(t, os.Chtimes(c.path(key, Cubin), when, when))
}

func TestKernelCacheLimitEvictsLeastRecentlyUsed(t *testing.T) {
	c := &kernelCache{dir: t.TempDir(), limit: 300}
	img := bytes.Repeat([]byte{1}, 100)
	require.NoError(t, c.put("a", Cubin, img))
	require.NoError(t, c.put("b", Cubin, img))
	require.NoError(t, c.put("c", Cubin, img))
	age(t, c, "a", 3*time.Hour)
	age(t, c, "b", 2*time.Hour)
	age(t, c, "c", 1*time.Hour)
	_, ok := c.get("a", Cubin) // a is now the most recently used
	require.True(t, ok)

	require.NoError(t, c.put("d", Cubin, img))
	assert.Equal(t, map[string]bool{"a": true, "c": true, "d": true}, cachedKeys(t, c.dir), "b, the least recently used, went")
	age(t, c, "d", 4*time.Hour) // older than any: but the image just written is never the one evicted
	require.NoError(t, c.put("e", Cubin, img))
	assert.Equal(t, map[string]bool{"a": true, "c": true, "e": true}, cachedKeys(t, c.dir))

	assert.Equal(t, KernelCacheStats{Hits: 1, Misses: 0, Writes: 5, Evictions: 2}, c.stats())
	_, ok = c.get("b", Cubin)
	assert.False(t, ok)
	assert.Equal(t, uint64(1), c.stats().Misses)
}

func TestKernelCacheLimitHolds(t *testing.T) {
	c := &kernelCache{dir: t.TempDir(), limit: 1000}
	for i := range 50 {
		require.NoError(t, c.put(fmt.Sprintf("k%02d", i), Cubin, bytes.Repeat([]byte{byte(i)}, 90+i)))
		var total int64
		for k := range cachedKeys(t, c.dir) {
			fi, err := os.Stat(c.path(k, Cubin))
			require.NoError(t, err)
			total += fi.Size()
		}
		require.LessOrEqual(t, total, c.limit, "after image %d", i)
	}
	b, ok := c.get("k49", Cubin)
	require.True(t, ok, "the newest image stays")
	assert.Len(t, b, 139)
}

func TestKernelCacheImageLargerThanTheLimit(t *testing.T) {
	c := &kernelCache{dir: t.TempDir(), limit: 10}
	require.NoError(t, c.put("small", Cubin, []byte("12345")))
	require.NoError(t, c.put("big", Cubin, bytes.Repeat([]byte{1}, 11)))
	_, ok := c.get("big", Cubin)
	assert.False(t, ok, "not cached")
	_, ok = c.get("small", Cubin)
	assert.True(t, ok, "and nothing evicted for it")
	assert.Zero(t, c.stats().Evictions)
}

func TestKernelCacheNoLimitKeepsEverything(t *testing.T) {
	c := &kernelCache{dir: t.TempDir()}
	for i := range 20 {
		require.NoError(t, c.put(fmt.Sprint(i), PTX, bytes.Repeat([]byte{1}, 1000)))
	}
	assert.Len(t, cachedKeys(t, c.dir), 20)
	var off *kernelCache
	assert.Zero(t, off.stats())
	_, ok := off.get("0", PTX)
	assert.False(t, ok)
}

// Two caches over one directory stand for two processes: each evicts under the shared limit,
// and an image one removes is a miss for the other, never an error.
func TestKernelCacheSharedDirectoryConcurrently(t *testing.T) {
	dir := t.TempDir()
	caches := []*kernelCache{{dir: dir, limit: 2000}, {dir: dir, limit: 2000}}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := caches[w%2]
			for i := range 40 {
				key := fmt.Sprintf("k%d", (i*7+w)%25)
				if b, ok := c.get(key, Cubin); ok {
					assert.Len(t, b, 100, "never a torn image")
					continue
				}
				assert.NoError(t, c.put(key, Cubin, bytes.Repeat([]byte{byte(w)}, 100)))
			}
		}()
	}
	wg.Wait()
	var total int64
	for k := range cachedKeys(t, dir) {
		fi, err := os.Stat(filepath.Join(dir, k+".cubin"))
		require.NoError(t, err)
		total += fi.Size()
	}
	assert.LessOrEqual(t, total, int64(2000))
	s0, s1 := caches[0].stats(), caches[1].stats()
	assert.Equal(t, uint64(160), s0.Hits+s0.Misses+s1.Hits+s1.Misses, "every get counted once")
	assert.Equal(t, s0.Misses+s1.Misses, s0.Writes+s1.Writes, "every miss wrote its image")
}
