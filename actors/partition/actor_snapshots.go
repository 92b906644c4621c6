package partition

import (
	"errors"
	"fmt"
	iofs "io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/samsa-io/samsa/actors/idempotence"
	"github.com/samsa-io/samsa/segment/vfs"
	"github.com/samsa-io/samsa/wire"
)

// Producer-state snapshots live in the partition directory as
// <offset>.snapshot (20 digits, like segment files; Kafka names its
// producer snapshots the same way): the idempotence.State encoding as of
// that log offset, in Kafka's format (a Kafka broker taking over the
// directory loads them, and samsa loads Kafka's), written atomically
// (temporary file, fsync, rename, directory fsync). The two newest are
// kept. On open the newest snapshot
// at or below the log end offset is loaded and the batch headers after it
// are replayed; snapshots above the log end (written before a crash cut
// the log's unsynced tail) are deleted. Without a usable snapshot the
// whole log is replayed.
const snapshotSuffix = ".snapshot"

// SnapshotPath is where the producer-state snapshot as of offset lives.
func SnapshotPath(dir string, offset int64) string {
	return filepath.Join(dir, fmt.Sprintf("%020d%s", offset, snapshotSuffix))
}

// Snapshots returns the producer-state snapshot offsets in dir on fs,
// newest first.
func Snapshots(fs vfs.FS, dir string) []int64 {
	names, err := fs.List(dir)
	if err != nil {
		return nil
	}
	var offs []int64
	for _, name := range names {
		if !strings.HasSuffix(name, snapshotSuffix) || len(name) != 20+len(snapshotSuffix) {
			continue
		}
		if off, err := strconv.ParseInt(name[:20], 10, 64); err == nil {
			offs = append(offs, off)
		}
	}
	slices.Sort(offs)
	slices.Reverse(offs)
	return offs
}

// fs is the filesystem of the partition's data directory: snapshots live
// beside the log, so crash tests of a log on a MemFS cover them too.
func (p *partitionActor) fs() vfs.FS {
	if d, ok := p.dir.(interface{ FS() vfs.FS }); ok {
		return d.FS()
	}
	return vfs.OS
}

// loadProducers rebuilds the producer state: snapshot plus replay. It
// returns the state and the offset of the snapshot it started from (-1:
// none, the whole log was replayed).
func (p *partitionActor) loadProducers(now int64) (*idempotence.State, int64) {
	fs, dir, end := p.fs(), p.plog.Path(), p.plog.LogEndOffset()
	state, from, snapAt := idempotence.New(), int64(0), int64(-1)
	for _, off := range Snapshots(fs, dir) {
		path := SnapshotPath(dir, off)
		if off > end {
			fs.Remove(path)
			continue
		}
		data, err := vfs.ReadFile(fs, path)
		if err == nil {
			var s *idempotence.State
			if s, err = idempotence.Decode(data, off); err == nil {
				state, from, snapAt = s, off, off
				break
			}
		}
		p.log.Warn("producer-state snapshot unusable; trying an older one or the whole log", append(p.attrs(), "file", path, "err", err)...)
		state, from = idempotence.New(), 0
	}
	replayed := 0
	err := p.plog.ScanBatchesWithControl(from, func(h *wire.BatchHeader, control []byte) error {
		if h.ProducerID < 0 || h.BaseOffset < from {
			return nil
		}
		replayed++
		if control == nil {
			state.Record(h, h.BaseOffset, h.MaxTimestamp)
			return nil
		}
		m, err := idempotence.ParseMarker(control)
		if err != nil {
			p.log.Warn("control batch is not a transaction marker; skipped", append(p.attrs(), "offset", h.BaseOffset, "err", err)...)
			return nil
		}
		// The marker's index entry may not have been written (a crash
		// after a follower's append); adding it again is a no-op.
		if a, ok := AbortedEntry(state, h.ProducerID, m, h.BaseOffset); ok {
			if err := p.plog.AddAbortedTxn(a); err != nil {
				return err
			}
		}
		state.RecordMarker(h.ProducerID, h.ProducerEpoch, m, h.BaseOffset, h.MaxTimestamp)
		return nil
	})
	if err != nil {
		// The log itself opened, so serve it; duplicates of batches whose
		// state was lost are then appended again (as after expiry).
		p.log.Error("producer state could not be rebuilt from the log; idempotent producers may see duplicates", append(p.attrs(), "err", err)...)
	}
	state.Expire(now, p.txn.expirationMs())
	if replayed > 0 {
		p.log.Info("producer state rebuilt", append(p.attrs(), "snapshot_offset", from, "batches_replayed", replayed, "producers", state.Len())...)
	}
	return state, snapAt
}

// snapshotProducers writes the producer state at the log end offset and
// drops older snapshots but one. Failures are logged, not fatal: the next
// open replays more of the log.
func (p *partitionActor) snapshotProducers(now int64) {
	fs, dir, end := p.fs(), p.plog.Path(), p.plog.LogEndOffset()
	if err := vfs.WriteFileAtomic(fs, SnapshotPath(dir, end), p.core.EncodeSnapshot(now, end)); err != nil {
		p.log.Warn("producer-state snapshot not written", append(p.attrs(), "err", err)...)
		return
	}
	p.core.SnapshotWritten(end)
	for i, off := range Snapshots(fs, dir) {
		if i >= 2 {
			if err := fs.Remove(SnapshotPath(dir, off)); err != nil && !errors.Is(err, iofs.ErrNotExist) {
				p.log.Warn("old producer-state snapshot not removed", append(p.attrs(), "err", err)...)
			}
		}
	}
}
