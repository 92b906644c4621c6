package segment

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"

	"github.com/samsa-io/samsa/segment/vfs"
)

// TxnIndexSuffix names a segment's aborted-transaction index.
const TxnIndexSuffix = ".txnindex"

// The aborted-transaction index is Kafka's: a file per segment, holding
// one 34-byte entry per transaction aborted by a marker in that segment,
// in marker order (big-endian):
//
//	0  version int16 (0)
//	2  producerId int64
//	10 firstOffset int64: the transaction's first offset
//	18 lastOffset int64: the offset of its ABORT marker
//	26 lastStableOffset int64: the last stable offset once it ended
//
// A read_committed fetch gets, with its data, the entries whose
// transactions overlap what it reads, so the consumer drops their
// records. Segments without an aborted transaction have no file.
const (
	abortedTxnSize    = 34
	abortedTxnVersion = 0
)

// AbortedTxn is one entry of the aborted-transaction index.
type AbortedTxn struct {
	ProducerID       int64
	FirstOffset      int64
	LastOffset       int64
	LastStableOffset int64
}

func encodeAbortedTxn(b []byte, a AbortedTxn) {
	be := binary.BigEndian
	be.PutUint16(b, abortedTxnVersion)
	be.PutUint64(b[2:], uint64(a.ProducerID))
	be.PutUint64(b[10:], uint64(a.FirstOffset))
	be.PutUint64(b[18:], uint64(a.LastOffset))
	be.PutUint64(b[26:], uint64(a.LastStableOffset))
}

// decodeTxnIndex reads a whole index file. A torn last entry (a crash
// while it was written) is dropped; an entry of an unknown version is
// an error, as in Kafka.
func decodeTxnIndex(path string, b []byte) ([]AbortedTxn, error) {
	be := binary.BigEndian
	out := make([]AbortedTxn, 0, len(b)/abortedTxnSize)
	for len(b) >= abortedTxnSize {
		if v := be.Uint16(b); v != abortedTxnVersion {
			return nil, fmt.Errorf("segment: %s: aborted-transaction entry of version %d", path, v)
		}
		out = append(out, AbortedTxn{
			ProducerID:       int64(be.Uint64(b[2:])),
			FirstOffset:      int64(be.Uint64(b[10:])),
			LastOffset:       int64(be.Uint64(b[18:])),
			LastStableOffset: int64(be.Uint64(b[26:])),
		})
		b = b[abortedTxnSize:]
	}
	return out, nil
}

// txnIndex is a segment's aborted transactions, loaded on first use.
type txnIndex struct {
	path    string
	exists  bool // the file is on disk (known from the directory listing)
	loaded  bool
	entries []AbortedTxn
}

func (x *txnIndex) load(fsys vfs.FS) error {
	if x.loaded {
		return nil
	}
	if x.exists {
		b, err := vfs.ReadFile(fsys, x.path)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if x.entries, err = decodeTxnIndex(x.path, b); err != nil {
			return err
		}
	}
	x.loaded = true
	return nil
}

// write replaces the file with the entries, durably; no entries, no
// file.
func (x *txnIndex) write(fsys vfs.FS, dir string) error {
	if len(x.entries) == 0 {
		if !x.exists {
			return nil
		}
		if err := fsys.Remove(x.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		x.exists = false
		return fsys.SyncDir(dir)
	}
	b := make([]byte, len(x.entries)*abortedTxnSize)
	for i, a := range x.entries {
		encodeAbortedTxn(b[i*abortedTxnSize:], a)
	}
	created := !x.exists
	if err := writeWhole(fsys, x.path, b); err != nil {
		return err
	}
	x.exists = true
	if created {
		return fsys.SyncDir(dir)
	}
	return nil
}

// AddAbortedTxn records an aborted transaction whose ABORT marker is at
// a.LastOffset. Call it before appending the marker, with the marker's
// offset to be (the log end): the entry is durable when AddAbortedTxn
// returns, so no durable marker is ever without its entry, and recovery
// drops the entries whose marker did not survive. The entry goes into
// the active segment, or the one holding a.LastOffset when the marker is
// already in the log (a replay after a restart, which may re-add an
// entry: one already recorded for the same marker, in that segment or
// the one before it, is not added again).
func (l *Log) AddAbortedTxn(a AbortedTxn) error {
	if l.closed {
		return ErrClosed
	}
	if a.LastOffset < l.logStart || a.LastOffset > l.active().next {
		return fmt.Errorf("%w: aborted transaction's marker at %d outside the log [%d, %d]", ErrOffsetOutOfRange, a.LastOffset, l.logStart, l.active().next)
	}
	i := l.segmentFor(a.LastOffset)
	for j := max(i-1, 0); j <= i; j++ {
		s := l.segs[j]
		if err := s.txn.load(l.d.fs); err != nil {
			return l.fail(err)
		}
		for _, e := range s.txn.entries {
			if e.LastOffset == a.LastOffset && e.ProducerID == a.ProducerID {
				return nil
			}
		}
	}
	s := l.segs[i]
	s.txn.entries = append(s.txn.entries, a)
	if err := s.txn.write(l.d.fs, l.path); err != nil {
		return l.fail(err)
	}
	return nil
}

// AbortedTxns returns the aborted transactions that overlap the offsets
// [from, upTo): those whose marker is at or after from and whose first
// offset is below upTo (Kafka's collectAbortedTransactions), in marker
// order.
func (l *Log) AbortedTxns(from, upTo int64) ([]AbortedTxn, error) {
	if l.closed {
		return nil, ErrClosed
	}
	var out []AbortedTxn
	// From the segment before from's: an entry written just before its
	// marker rolled the log sits in the segment before the marker's.
	for i := max(l.segmentFor(max(from, l.logStart))-1, 0); i < len(l.segs); i++ {
		// A transaction aborted in a later segment may have begun below
		// upTo, so later segments are searched too, until one holds an
		// entry whose stable point is at or past upTo: every transaction
		// overlapping [from, upTo) had ended by then.
		s := l.segs[i]
		if err := s.txn.load(l.d.fs); err != nil {
			return nil, err
		}
		done := false
		for _, e := range s.txn.entries {
			if e.LastOffset >= from && e.FirstOffset < upTo {
				out = append(out, e)
			}
			if e.LastStableOffset >= upTo {
				done = true
			}
		}
		if done {
			break
		}
	}
	return out, nil
}

// truncateTxnIndex drops the entries whose marker is at or after
// offset from the last segment and the one before it (where an entry
// written just before its marker rolled the log sits); offset is in the
// last segment.
func (l *Log) truncateTxnIndex(offset int64) error {
	for i := max(len(l.segs)-2, 0); i < len(l.segs); i++ {
		if err := l.segs[i].txn.truncate(l.d.fs, l.path, offset); err != nil {
			return err
		}
	}
	return nil
}

func (x *txnIndex) truncate(fsys vfs.FS, dir string, offset int64) error {
	if !x.exists && !x.loaded {
		return nil
	}
	if err := x.load(fsys); err != nil {
		return err
	}
	kept := x.entries[:0]
	for _, e := range x.entries {
		if e.LastOffset < offset {
			kept = append(kept, e)
		}
	}
	if len(kept) == len(x.entries) {
		return nil
	}
	x.entries = kept
	return x.write(fsys, dir)
}
