package segment

import (
	"errors"
	"io/fs"

	"github.com/samsa-io/samsa/segment/vfs"
	"github.com/samsa-io/samsa/wire"
)

// epochCache is the leader epoch cache of a partition: which leader epoch
// began at which offset, persisted in leader-epoch-checkpoint after every
// change. Owned by the log's goroutine.
type epochCache struct {
	fs      vfs.FS
	path    string
	entries []epochEntry
}

// loadEpochCache reads leader-epoch-checkpoint. When the file is missing
// or damaged the cache is empty and lost says why: the log's batch
// headers carry every epoch, so the caller rebuilds it (rebuildFrom).
func loadEpochCache(fsys vfs.FS, path string) (c *epochCache, lost error, err error) {
	c = &epochCache{fs: fsys, path: path}
	data, err := vfs.ReadFile(fsys, path)
	if errors.Is(err, fs.ErrNotExist) {
		return c, err, nil
	}
	if err != nil {
		return nil, nil, err
	}
	entries, err := parseEpochCheckpoint(data)
	if err != nil {
		return c, err, nil
	}
	c.entries = entries
	return c, nil, nil
}

// rebuildFrom replaces the cache with the epochs the log's batch headers
// carry from offset from on (each epoch starts at the first batch that
// has it) and saves it.
func (c *epochCache) rebuildFrom(l *Log, from int64) error {
	c.entries = nil
	err := l.ScanBatches(from, func(h *wire.BatchHeader) error {
		if last, ok := c.latest(); h.LeaderEpoch >= 0 && (!ok || h.LeaderEpoch > last.Epoch) {
			c.entries = append(c.entries, epochEntry{h.LeaderEpoch, h.BaseOffset})
		}
		return nil
	})
	if err != nil {
		return err
	}
	return c.save()
}

func (c *epochCache) save() error {
	return vfs.WriteFileAtomic(c.fs, c.path, encodeEpochCheckpoint(c.entries))
}

func (c *epochCache) latest() (epochEntry, bool) {
	if len(c.entries) == 0 {
		return epochEntry{Epoch: -1, Start: -1}, false
	}
	return c.entries[len(c.entries)-1], true
}

// assign records that epoch starts at start. An epoch not newer than the
// latest is ignored (it is the same leader, or a stale one).
func (c *epochCache) assign(epoch int32, start int64) (bool, error) {
	if epoch < 0 {
		return false, nil
	}
	if last, ok := c.latest(); ok && (epoch <= last.Epoch || start < last.Start) {
		return false, nil
	}
	c.entries = append(c.entries, epochEntry{epoch, start})
	return true, c.save()
}

// endOffsetFor answers OffsetForLeaderEpoch: the largest epoch <= the
// requested one and the offset where the next epoch began (the log end
// offset for the latest epoch). (-1, -1) when the epoch is unknown or
// newer than every entry.
func (c *epochCache) endOffsetFor(epoch int32, logEnd int64) (int32, int64) {
	last, ok := c.latest()
	if !ok || epoch < 0 {
		return -1, -1
	}
	if epoch == last.Epoch {
		return epoch, logEnd
	}
	higher := -1
	for i, e := range c.entries {
		if e.Epoch > epoch {
			higher = i
			break
		}
	}
	if higher < 0 {
		return -1, -1
	}
	if higher == 0 {
		return epoch, c.entries[0].Start
	}
	return c.entries[higher-1].Epoch, c.entries[higher].Start
}

// truncateFromEnd drops epochs that start at or after end.
func (c *epochCache) truncateFromEnd(end int64) error {
	n := len(c.entries)
	for n > 0 && c.entries[n-1].Start >= end {
		n--
	}
	if n == len(c.entries) {
		return nil
	}
	c.entries = c.entries[:n]
	return c.save()
}

// truncateFromStart drops epochs wholly before start; the epoch in force
// at start now begins there.
func (c *epochCache) truncateFromStart(start int64) error {
	keep := 0 // index of the epoch in force at start
	for i, e := range c.entries {
		if e.Start <= start {
			keep = i
		}
	}
	if len(c.entries) == 0 || c.entries[0].Start >= start {
		return nil
	}
	c.entries = append([]epochEntry(nil), c.entries[keep:]...)
	if c.entries[0].Start < start {
		c.entries[0].Start = start
	}
	return c.save()
}
