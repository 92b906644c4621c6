package segment

import (
	"container/list"
	"sync"
	"sync/atomic"

	"github.com/samsa-io/samsa/segment/vfs"
)

// handle is a reference-counted open file. The file closes when the last
// reference is released, so a read region stays valid after the cache
// evicts the handle or retention deletes the segment.
type handle struct {
	f    vfs.File
	refs atomic.Int32
	live *atomic.Int64 // the cache's count of open files

	// cached is true while the cache holds its reference (set and
	// cleared under the cache's mutex); used is the second-chance bit of
	// the eviction policy, set by tryAcquire, which does not touch the
	// LRU list.
	cached atomic.Bool
	used   atomic.Bool
}

func (h *handle) acquire() { h.refs.Add(1) }

// tryAcquire takes a reference on a handle the caller remembers from an
// earlier acquire (the active segment's, on every append) without the
// cache's mutex and map lookup. It fails, and the caller goes through
// fileCache.acquire, once the cache has let the handle go; it never
// revives a handle whose last reference is gone (refs 0: closed).
func (h *handle) tryAcquire() bool {
	if h == nil || !h.cached.Load() {
		return false
	}
	for {
		n := h.refs.Load()
		if n <= 0 {
			return false
		}
		if h.refs.CompareAndSwap(n, n+1) {
			break
		}
	}
	if !h.used.Load() {
		h.used.Store(true)
	}
	return true
}

func (h *handle) release() {
	if n := h.refs.Add(-1); n == 0 {
		h.f.Close()
		h.live.Add(-1)
	} else if n < 0 {
		panic("segment: file handle released too often")
	}
}

// fileCache bounds the number of open segment files of a log directory.
// It keeps at most max handles, least recently used first out; an evicted
// handle closes once its users release it. Handles taken with tryAcquire
// are not moved in the LRU list; their used bit gives them a second
// chance instead (clock-style): eviction moves a used handle to the
// front and clears the bit rather than closing it. Safe for concurrent
// use.
type fileCache struct {
	fs  vfs.FS
	max int

	mu      sync.Mutex
	lru     list.List // of *cacheEntry, most recent at the front
	entries map[string]*list.Element
	opens   atomic.Int64 // files opened, for tests and metrics
	live    atomic.Int64 // files open now, cached or still referenced
}

type cacheEntry struct {
	path string
	h    *handle
}

func newFileCache(fs vfs.FS, max int) *fileCache {
	return &fileCache{fs: fs, max: max, entries: map[string]*list.Element{}}
}

// acquire returns a handle on path, opened read-write, with one reference
// for the caller.
func (c *fileCache) acquire(path string) (*handle, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[path]; ok {
		c.lru.MoveToFront(el)
		h := el.Value.(*cacheEntry).h
		h.acquire()
		return h, nil
	}
	f, err := c.fs.OpenReadWrite(path)
	if err != nil {
		return nil, err
	}
	c.opens.Add(1)
	c.live.Add(1)
	h := &handle{f: f, live: &c.live}
	h.refs.Store(2) // the cache's and the caller's
	h.cached.Store(true)
	c.entries[path] = c.lru.PushFront(&cacheEntry{path: path, h: h})
	c.evictLocked()
	return h, nil
}

// evictLocked closes the least recently used handles beyond max, giving
// those used through tryAcquire since they were last looked at a second
// chance. Every pass clears a bit or evicts, so it ends.
func (c *fileCache) evictLocked() {
	for chances := 2 * c.lru.Len(); c.lru.Len() > c.max; chances-- {
		el := c.lru.Back()
		if h := el.Value.(*cacheEntry).h; chances > 0 && h.used.Load() {
			h.used.Store(false)
			c.lru.MoveToFront(el)
			continue
		}
		c.removeLocked(el)
	}
}

// adopt puts an already open file in the cache (a segment just created),
// returning it with one reference for the caller.
func (c *fileCache) adopt(path string, f vfs.File) *handle {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[path]; ok {
		c.removeLocked(el)
	}
	c.live.Add(1)
	h := &handle{f: f, live: &c.live}
	h.refs.Store(2)
	h.cached.Store(true)
	c.entries[path] = c.lru.PushFront(&cacheEntry{path: path, h: h})
	c.evictLocked()
	return h
}

// forget drops path from the cache (its file is being deleted).
func (c *fileCache) forget(path string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[path]; ok {
		c.removeLocked(el)
	}
}

func (c *fileCache) removeLocked(el *list.Element) {
	e := el.Value.(*cacheEntry)
	c.lru.Remove(el)
	delete(c.entries, e.path)
	e.h.cached.Store(false) // before the release: tryAcquire must not see it cached at refs 0
	e.h.release()
}

// closeAll empties the cache.
func (c *fileCache) closeAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.lru.Len() > 0 {
		c.removeLocked(c.lru.Back())
	}
}

// OpenFiles is the number of segment files the directory holds open:
// cached ones plus evicted ones still referenced by readers or pending
// fsyncs.
func (d *Dir) OpenFiles() int64 { return d.cache.live.Load() }
