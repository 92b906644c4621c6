package segment

import (
	"sync"

	"github.com/samsa-io/samsa/segment/vfs"
)

// CleanerCheckpointFile is the log directory's cleaner checkpoint
// (Kafka's name and format, an offset checkpoint): for each compacted
// log, the offset its dirty section starts at. Everything below was
// cleaned by a cleaning whose swap completed; a missing entry means the
// whole log is dirty.
const CleanerCheckpointFile = "cleaner-offset-checkpoint"

// cleanerCheckpoints is the file's content, loaded on first use.
type cleanerCheckpoints struct {
	mu      sync.Mutex
	loaded  bool
	offsets map[TopicPartition]int64
}

func (d *Dir) cleanerOffsets() (map[TopicPartition]int64, error) {
	c := &d.cleanerCk
	if c.loaded {
		return c.offsets, nil
	}
	m, err := readOffsetCheckpoint(d.fs, d.path+"/"+CleanerCheckpointFile, d.logger,
		"compacted logs are cleaned from their start again")
	if err != nil {
		return nil, err
	}
	c.offsets, c.loaded = m, true
	return m, nil
}

// CleanerCheckpoint returns where tp's dirty section starts, and false
// when the checkpoint has no entry for it. Safe for concurrent use.
func (d *Dir) CleanerCheckpoint(tp TopicPartition) (int64, bool, error) {
	c := &d.cleanerCk
	c.mu.Lock()
	defer c.mu.Unlock()
	m, err := d.cleanerOffsets()
	if err != nil {
		return 0, false, err
	}
	v, ok := m[tp]
	return v, ok, nil
}

// SetCleanerCheckpoint records that tp's dirty section starts at offset
// (a negative offset removes the entry: a deleted log) and rewrites the
// file atomically. Safe for concurrent use.
func (d *Dir) SetCleanerCheckpoint(tp TopicPartition, offset int64) error {
	c := &d.cleanerCk
	c.mu.Lock()
	defer c.mu.Unlock()
	m, err := d.cleanerOffsets()
	if err != nil {
		return err
	}
	if offset < 0 {
		if _, ok := m[tp]; !ok {
			return nil
		}
		delete(m, tp)
	} else {
		m[tp] = offset
	}
	return vfs.WriteFileAtomic(d.fs, d.path+"/"+CleanerCheckpointFile, encodeOffsetCheckpoint(m))
}

// truncateCleanerCheckpoint lowers the log's cleaner checkpoint to end
// after a truncation (as Kafka does), so records appended again there
// count as dirty. A failure to write it is logged: it only leaves the
// new records' older duplicates for a later cleaning.
func (l *Log) truncateCleanerCheckpoint(end int64) {
	v, ok, err := l.d.CleanerCheckpoint(l.tp)
	if err == nil && ok && v > end {
		err = l.d.SetCleanerCheckpoint(l.tp, end)
	}
	if err != nil {
		l.d.logger.Warn("segment: cleaner checkpoint not lowered after a truncation", "partition", l.tp.String(), "err", err)
	}
}

// forgetCleanerCheckpoint drops a deleted log's entry (logged on failure:
// a log created under the same name resets an entry past its end).
func (d *Dir) forgetCleanerCheckpoint(tp TopicPartition) {
	if err := d.SetCleanerCheckpoint(tp, -1); err != nil {
		d.logger.Warn("segment: cleaner checkpoint entry of a deleted log not removed", "partition", tp.String(), "err", err)
	}
}
