package segment

import (
	"errors"
	"fmt"
	"sort"
	"sync/atomic"
	"time"
)

// Log is one partition's log: a sequence of segments in one directory.
//
// A Log is owned by one goroutine (the partition actor): Append,
// AppendReplicated, Read, ReadBytes, ReadAppend, OffsetForTimestamp, Roll,
// DeleteExpired, DeleteRecordsBefore, TruncateTo, AssignEpoch, Epochs,
// EndOffsetForEpoch, Segments, SetConfig, Flush and Close must not be
// called concurrently.
// WhenDurable and the read-only accessors LogStartOffset, LogEndOffset,
// RecoveryPoint, Size and Failure are safe from any goroutine.
type Log struct {
	d    *Dir
	tp   TopicPartition
	path string // partition directory
	cfg  Config

	segs     []*segment // by base offset; the last one is active
	logStart int64
	epochs   *epochCache
	fl       *flusher
	closed   bool

	scratch []batchMeta // splitBatches' output, reused across appends

	pubLogStart atomic.Int64
	pubLogEnd   atomic.Int64
	pubSize     atomic.Int64
	pubSegments atomic.Int32
	hw          atomic.Int64 // the partition's high watermark, for the replication checkpoint (highwatermark.go)
}

// TopicPartition is the partition the log holds.
func (l *Log) TopicPartition() TopicPartition { return l.tp }

// Path is the partition directory.
func (l *Log) Path() string { return l.path }

// LogStartOffset is the first offset a reader may fetch.
func (l *Log) LogStartOffset() int64 { return l.pubLogStart.Load() }

// LogEndOffset is the offset the next appended record gets.
func (l *Log) LogEndOffset() int64 { return l.pubLogEnd.Load() }

// RecoveryPoint is the offset below which every record is fsynced.
func (l *Log) RecoveryPoint() int64 { return l.fl.durableOffset() }

// Size is the number of bytes of the log's segment files (DescribeLogDirs).
func (l *Log) Size() int64 { return l.pubSize.Load() }

// SegmentCount is the number of segments, the active one included
// (Kafka's NumLogSegments). Safe from any goroutine.
func (l *Log) SegmentCount() int { return int(l.pubSegments.Load()) }

// Failure returns the error that failed the log (a failed fsync or
// write), or nil. A failed log refuses appends; reopen it to recover.
func (l *Log) Failure() error { return l.fl.failure() }

// Config is the log's current configuration, defaults filled in.
func (l *Log) Config() Config { return l.cfg }

// SetConfig changes the configuration of the live log (topic configs are
// altered live). Size limits apply from the next append or retention
// pass; a new flush policy applies at once.
func (l *Log) SetConfig(cfg Config) {
	cfg = cfg.withDefaults()
	l.cfg = cfg
	l.fl.setPolicy(cfg.FlushPolicy, time.Duration(cfg.FlushIntervalMs)*time.Millisecond)
}

// WhenDurable calls fn once every offset up to and including offset is
// fsynced, or with the error that makes that impossible (ErrLogFailed
// wrapping the fsync error, ErrTruncated, ErrClosed). Under the interval
// and never policies fn is called at once with nil: those policies
// acknowledge without fsync. fn runs on the flushing goroutine or, when
// the answer is already known, on the caller's; it must not block. Safe
// from any goroutine.
func (l *Log) WhenDurable(offset int64, fn func(error)) { l.fl.whenDurable(offset, fn) }

// Flush fsyncs everything appended so far, whatever the policy, and
// returns when it is done.
func (l *Log) Flush() error {
	if l.closed {
		return ErrClosed
	}
	if err := l.fl.failure(); err != nil {
		return err
	}
	h, err := l.d.cache.acquire(l.active().logPath)
	if err != nil {
		return l.fail(err)
	}
	l.fl.mu.Lock()
	l.fl.addLocked(h, l.LogEndOffset())
	l.fl.mu.Unlock()
	h.release()
	return l.fl.flush()
}

// Close fsyncs the log, writes the active segment's indexes and releases
// the log's resources. The directory remembers the log as cleanly closed.
func (l *Log) Close() error {
	if l.closed {
		return ErrClosed
	}
	err := l.closeFiles()
	l.d.forgetLog(l, err == nil)
	return err
}

func (l *Log) closeFiles() error {
	err := l.fl.failure()
	if err == nil {
		// Space reserved past the end goes back first, so the last
		// fsync covers that change too.
		if l.d.reserve.enabled() {
			if h, herr := l.d.cache.acquire(l.active().logPath); herr == nil {
				l.giveBackReserved(l.active(), h)
				h.release()
			}
		}
		if err = l.active().writeIndexes(l.d.fs); err == nil {
			err = l.Flush()
		}
	}
	l.closed = true
	l.fl.close()
	return err
}

// SegmentInfo describes one segment, for tests and operators.
type SegmentInfo struct {
	BaseOffset int64
	NextOffset int64
	Size       int64
	Path       string
}

// Segments lists the log's segments, oldest first.
func (l *Log) Segments() []SegmentInfo {
	out := make([]SegmentInfo, len(l.segs))
	for i, s := range l.segs {
		out[i] = SegmentInfo{BaseOffset: s.base, NextOffset: s.next, Size: s.size, Path: s.logPath}
	}
	return out
}

func (l *Log) active() *segment { return l.segs[len(l.segs)-1] }

// segmentFor returns the index of the segment that holds offset: the last
// one whose base is <= offset.
func (l *Log) segmentFor(offset int64) int {
	i := sort.Search(len(l.segs), func(i int) bool { return l.segs[i].base > offset })
	return max(i-1, 0)
}

// nextBase is the base offset of the segment after segs[i], or -1.
func (l *Log) nextBase(i int) int64 {
	if i+1 < len(l.segs) {
		return l.segs[i+1].base
	}
	return -1
}

// ensureLoaded brings segs[i]'s indexes into memory, rebuilding them from
// the log when they are missing or damaged.
func (l *Log) ensureLoaded(i int) error {
	s := l.segs[i]
	if s.loaded {
		return nil
	}
	err := s.loadIndexes(l.d.fs, l.nextBase(i))
	if err == nil {
		return nil
	}
	l.d.logger.Warn("segment: rebuilding damaged index", "partition", l.tp.String(), "segment", s.base, "err", err)
	return l.rebuildClosed(i)
}

// withIndexCheck runs op, which finds batches of segs[i] through its
// offset index and must have no effect when it fails. When what the log
// holds does not match what the index said (errIndexMismatch: a wrong
// position would otherwise read from the middle of a batch and skip
// records without an error), the index is rebuilt from the log, which
// is logged, and op runs once more; a second mismatch is corruption.
func (l *Log) withIndexCheck(i int, op func() error) error {
	err := op()
	if !errors.Is(err, errIndexMismatch) {
		return err
	}
	s := l.segs[i]
	l.d.logger.Warn("segment: offset index does not match the log; rebuilding it from the log",
		"partition", l.tp.String(), "segment", s.base, "err", err)
	if i < len(l.segs)-1 {
		err = l.rebuildClosed(i)
	} else {
		err = l.rescanActive()
	}
	if err != nil {
		return err
	}
	if err = op(); errors.Is(err, errIndexMismatch) {
		return &CorruptionError{Path: s.logPath, Position: -1, Offset: -1, Err: err}
	}
	return err
}

// locateChecked is segs[i].locate under withIndexCheck, for callers that
// need only the position of the batch holding offset (or the next one).
func (l *Log) locateChecked(i int, h *handle, offset int64) (pos int64, found bool, err error) {
	err = l.withIndexCheck(i, func() (err error) {
		pos, _, found, err = l.segs[i].locate(h.f, offset)
		return err
	})
	return pos, found, err
}

// rescanActive rebuilds the active segment's in-memory indexes from its
// file (they came from disk after a clean shutdown). The segment must be
// whole: any invalid byte is corruption, and fails the log.
func (l *Log) rescanActive() error {
	s := l.active()
	h, err := l.d.cache.acquire(s.logPath)
	if err != nil {
		return err
	}
	defer h.release()
	size, next := s.size, s.next
	s.idx, s.tidx, s.next, s.size, s.sinceIndex, s.maxTs, s.maxTsOffset = nil, nil, s.base, 0, 0, -1, -1
	res, _ := s.scan(h.f, 0, size, l.cfg.IndexIntervalBytes, make([]byte, min(scanBufSize, size+1)))
	if res.stopErr != nil || s.next != next {
		err := res.stopErr
		if err == nil {
			err = fmt.Errorf("the log ends at offset %d, not %d", s.next, next)
		}
		return l.fail(&CorruptionError{Path: s.logPath, Position: res.validSize, Offset: s.next, Err: err})
	}
	return nil
}

// rebuildClosed rescans a closed segment that must be whole and rewrites
// its indexes. Any invalid byte is corruption.
func (l *Log) rebuildClosed(i int) error {
	s := l.segs[i]
	h, err := l.d.cache.acquire(s.logPath)
	if err != nil {
		return err
	}
	defer h.release()
	s.idx, s.tidx, s.next, s.sinceIndex, s.maxTs, s.maxTsOffset = nil, nil, s.base, 0, -1, -1
	size := s.size
	res, _ := s.scan(h.f, 0, size, l.cfg.IndexIntervalBytes, make([]byte, scanBufSize))
	if res.stopErr != nil {
		return &CorruptionError{Path: s.logPath, Position: res.validSize, Offset: s.next, Err: res.stopErr}
	}
	if nb := l.nextBase(i); nb >= 0 && s.next != nb {
		return &CorruptionError{Path: s.logPath, Position: size, Offset: s.next,
			Err: errors.New("segment ends before the next segment's base offset")}
	}
	s.appendTimeEntry()
	s.loaded = true
	return s.writeIndexes(l.d.fs)
}

// fail puts the log in the failed state with cause and returns the error.
func (l *Log) fail(cause error) error {
	return l.fl.finish(-1, cause, -1)
}

func (l *Log) publish() {
	l.pubLogStart.Store(l.logStart)
	l.pubLogEnd.Store(l.active().next)
	var size int64
	for _, s := range l.segs {
		size += s.size
	}
	l.pubSize.Store(size)
	l.pubSegments.Store(int32(len(l.segs)))
}

// Epochs returns the leader epoch cache: (epoch, start offset) pairs.
func (l *Log) Epochs() [][2]int64 {
	out := make([][2]int64, len(l.epochs.entries))
	for i, e := range l.epochs.entries {
		out[i] = [2]int64{int64(e.Epoch), e.Start}
	}
	return out
}

// LatestEpoch is the newest leader epoch in the cache, or -1.
func (l *Log) LatestEpoch() int32 {
	e, _ := l.epochs.latest()
	return e.Epoch
}

// AssignEpoch records that leader epoch epoch starts at offset start (a
// new leader does this on election). Older or equal epochs are ignored.
func (l *Log) AssignEpoch(epoch int32, start int64) error {
	if _, err := l.epochs.assign(epoch, start); err != nil {
		return l.fail(err)
	}
	return nil
}

// EndOffsetForEpoch answers OffsetForLeaderEpoch: the largest known epoch
// <= epoch and the offset where the epoch after it began (the log end
// offset for the latest epoch); (-1, -1) when unknown.
func (l *Log) EndOffsetForEpoch(epoch int32) (int32, int64) {
	return l.epochs.endOffsetFor(epoch, l.active().next)
}
