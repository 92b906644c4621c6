package segment

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/samsa-io/samsa/wire"
)

// The swap of a cleaned group (base b, replacing segments b = o1 < o2 <
// ... < ok) goes through these steps; each line ends with the directory
// fsynced, so a crash leaves the directory of one of them:
//
//	a. b.index, b.timeindex, b.txnindex ".cleaned" -> ".swap"
//	b. b.log.cleaned -> b.log.swap                      (the commit point)
//	c. o2..ok's files and o1's index files removed; the index ".swap"
//	   files renamed to their final names
//	d. b.log.swap -> b.log (replacing o1's)
//
// Recovery (completeSwaps, before anything else when a log opens) finishes
// every swap whose b.log.swap exists: it removes the segments whose base
// lies in (b, end of b.log.swap's batches), renames the remaining index
// ".swap" files, then b.log.swap to b.log. Without a b.log.swap nothing
// was committed: the ".cleaned" and ".swap" files are deleted as
// leftovers and the old segments, untouched until step c, stay.
//
// The cleaned segment always holds the group's last batch (as an empty
// batch when its records all went), so its batches end where the group's
// last old segment's did and that range covers every old segment of the
// group: a finished swap leaves none of them. (Only an old segment with
// no batch at all, the empty leftover of an earlier cleaning, can lie
// past it, and it holds nothing.) Old segments are removed oldest first,
// so a tombstone never goes before the records it deletes.

// CommitClean swaps a job's cleaned segments into the log (see CleanJob)
// and returns the job's stats. If the log's segments are no longer those
// of the snapshot, the job is abandoned with ErrCleanStale. A failure
// during the swap itself fails the log (reopening it finishes or undoes
// the swap). Owned by the log's goroutine.
func (l *Log) CommitClean(j *CleanJob) (CleanStats, error) {
	defer j.release()
	if l.closed {
		j.Abort()
		return j.Stats, ErrClosed
	}
	if err := l.fl.failure(); err != nil {
		j.Abort()
		return j.Stats, err
	}
	if j.l != l {
		j.Abort()
		return j.Stats, ErrCleanStale // prepared on a log since closed and reopened
	}
	if !j.ran || len(j.groups) == 0 {
		j.Abort()
		return j.Stats, nil
	}
	// The snapshot's segments must still be the log's, from where it now
	// starts (retention may have deleted whole groups from the front).
	at := -1
	for i, s := range l.segs {
		if s == j.segs[0] {
			at = i
			break
		}
	}
	lastSeg := j.groups[len(j.groups)-1]
	if at != 0 || at+lastSeg.first+lastSeg.n >= len(l.segs) {
		j.Abort()
		return j.Stats, ErrCleanStale
	}
	for i := 0; i < lastSeg.first+lastSeg.n; i++ {
		s := l.segs[at+i]
		if s != j.segs[i] || s.size != j.sizes[i] || len(s.txn.entries) != j.txnLens[i] || l.nextBase(at+i) != j.nexts[i] {
			j.Abort()
			return j.Stats, ErrCleanStale
		}
	}
	var kept []*segment
	for _, g := range j.groups {
		if err := l.swapGroup(j, g); err != nil {
			j.Abort()
			return j.Stats, l.fail(fmt.Errorf("segment: swapping cleaned segment %s: %w", g.ns.logPath, err))
		}
		kept = append(kept, g.ns)
	}
	l.segs = append(kept, l.segs[lastSeg.first+lastSeg.n:]...)
	l.publish()
	return j.Stats, nil
}

// swapGroup carries out steps a-d for one group.
func (l *Log) swapGroup(j *CleanJob, g *cleanGroup) error {
	fsys := l.d.fs
	ns := g.ns
	for _, p := range []string{ns.idxPath, ns.timePath, ns.txn.path} {
		if err := fsys.Rename(p+CleanedSuffix, p+SwapSuffix); err != nil {
			return err
		}
	}
	if err := fsys.SyncDir(l.path); err != nil {
		return err
	}
	if err := fsys.Rename(ns.logPath+CleanedSuffix, ns.logPath+SwapSuffix); err != nil {
		return err
	}
	if err := fsys.SyncDir(l.path); err != nil {
		return err
	}
	g.written = false // committed: Abort must not remove its files now
	for i := g.first; i < g.first+g.n; i++ {
		old := j.segs[i]
		l.d.cache.forget(old.logPath)
		paths := []string{old.idxPath, old.timePath, old.txn.path}
		if i > g.first {
			paths = append(paths, old.logPath)
		}
		for _, p := range paths {
			if err := fsys.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
	}
	for _, p := range []string{ns.idxPath, ns.timePath, ns.txn.path} {
		if err := fsys.Rename(p+SwapSuffix, p); err != nil {
			return err
		}
	}
	if err := fsys.SyncDir(l.path); err != nil {
		return err
	}
	if err := fsys.Rename(ns.logPath+SwapSuffix, ns.logPath); err != nil {
		return err
	}
	return fsys.SyncDir(l.path)
}

// completeSwaps finishes the swaps a crash interrupted after their commit
// point (see the steps above), before the log's files are listed for
// opening.
func (d *Dir) completeSwaps(dir string) error {
	names, err := d.fs.List(dir)
	if err != nil {
		return err
	}
	var bases []int64
	for _, n := range names {
		if b, ok := parseSegmentName(n, LogSuffix+SwapSuffix); ok {
			bases = append(bases, b)
		}
	}
	if len(bases) == 0 {
		return nil
	}
	for _, b := range bases {
		ns := newSegment(dir, b)
		end, err := d.swapEnd(ns.logPath + SwapSuffix)
		if err != nil {
			return err
		}
		for _, n := range names {
			for _, suf := range []string{LogSuffix, IndexSuffix, TimeIndexSuffix, TxnIndexSuffix} {
				if c, ok := parseSegmentName(n, suf); ok && c > b && c < end {
					d.cache.forget(dir + "/" + n)
					if err := d.fs.Remove(dir + "/" + n); err != nil && !errors.Is(err, fs.ErrNotExist) {
						return err
					}
				}
			}
		}
		for _, p := range []string{ns.idxPath, ns.timePath, ns.txn.path} {
			if _, err := d.fs.Stat(p + SwapSuffix); err == nil {
				if err := d.fs.Rename(p+SwapSuffix, p); err != nil {
					return err
				}
			}
		}
		d.cache.forget(ns.logPath)
		if err := d.fs.Rename(ns.logPath+SwapSuffix, ns.logPath); err != nil {
			return err
		}
		d.logger.Info("segment: finished a cleaned segment's swap that a crash interrupted", "dir", dir, "segment", b, "end", end)
	}
	return d.fs.SyncDir(dir)
}

// swapEnd is the offset after the last batch of a swap file (fsynced
// whole before it was renamed to .swap), or its base when it is empty.
func (d *Dir) swapEnd(path string) (int64, error) {
	name := path[strings.LastIndexByte(path, '/')+1:]
	base, _ := parseSegmentName(name, LogSuffix+SwapSuffix)
	f, err := d.fs.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		return 0, err
	}
	end := base
	var hb [wire.BatchHeaderSize]byte
	for pos := int64(0); pos < size; {
		h, err := readHeader(f, pos, &hb)
		if err != nil {
			return 0, &CorruptionError{Path: path, Position: pos, Offset: -1, Err: err}
		}
		end = h.LastOffset() + 1
		pos += h.Size()
	}
	return end, nil
}
