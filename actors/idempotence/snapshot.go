package idempotence

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"sort"
)

// Snapshots are written in Kafka's producer-snapshot format (version 1 of
// ProducerStateManager's, the only one Kafka 3.9 reads), so that a Kafka
// broker opening a directory samsa wrote loads them, and samsa loads
// Kafka's. The offset a snapshot was taken at is its file name, not part
// of its content. Big-endian:
//
//	0  version int16 (1)
//	2  crc uint32: CRC-32C of everything after this field
//	6  entry count int32
//	then per entry (46 bytes): producer id int64, epoch int16,
//	   last sequence int32, last offset int64, offset delta int32,
//	   timestamp int64, coordinator epoch int32,
//	   current transaction first offset int64 (-1: none open)
//
// Kafka writes one entry per producer: its last batch. samsa writes one
// per remembered batch, oldest first (the last entry carrying the
// producer's last timestamp), so its own duplicate detection keeps all
// BatchesToRetain batches across a restart; Kafka, keeping the last entry
// of a producer id, ends with the same state as from its own snapshot. A
// producer with no batch is one entry with last sequence and last offset
// -1.
//
// samsa's own earlier layouts are still read: version 2, and version 1
// when its length is not that of Kafka's (both had the snapshot offset at
// byte 6 and per producer its batches).
const (
	snapshotVersion       = 1
	legacySnapshotVersion = 2
	snapshotHeader        = 10
	snapshotEntrySize     = 46
)

// ErrBadSnapshot reports a snapshot that cannot be trusted; the caller
// rebuilds producer state by replaying the whole log instead.
var ErrBadSnapshot = errors.New("idempotence: corrupt producer-state snapshot")

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// Encode serializes the state for a snapshot taken at log offset offset
// (the file's name): batches at or after it are left out, since the
// loader replays the log from there.
func (s *State) Encode(offset int64) []byte {
	ids := make([]int64, 0, len(s.producers))
	for id := range s.producers {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	be := binary.BigEndian
	b := make([]byte, snapshotHeader, snapshotHeader+len(ids)*snapshotEntrySize)
	be.PutUint16(b, snapshotVersion)
	n := 0
	entry := func(id int64, p *Producer, lastSeq int32, lastOffset int64, delta int32, ts int64) {
		b = be.AppendUint64(b, uint64(id))
		b = be.AppendUint16(b, uint16(p.Epoch))
		b = be.AppendUint32(b, uint32(lastSeq))
		b = be.AppendUint64(b, uint64(lastOffset))
		b = be.AppendUint32(b, uint32(delta))
		b = be.AppendUint64(b, uint64(ts))
		b = be.AppendUint32(b, uint32(p.CoordinatorEpoch))
		b = be.AppendUint64(b, uint64(p.TxnFirstOffset))
		n++
	}
	for _, id := range ids {
		p := s.producers[id]
		batches := p.Batches
		for len(batches) > 0 && batches[len(batches)-1].FirstOffset >= offset {
			batches = batches[:len(batches)-1]
		}
		if len(batches) == 0 {
			entry(id, p, -1, -1, 0, p.LastTimestamp)
			continue
		}
		for i, r := range batches {
			ts := r.Timestamp
			if i == len(batches)-1 {
				ts = p.LastTimestamp
			}
			entry(id, p, r.LastSeq, r.LastOffset, int32(r.LastOffset-r.FirstOffset), ts)
		}
	}
	be.PutUint32(b[6:], uint32(n))
	be.PutUint32(b[2:], crc32.Checksum(b[6:], crcTable))
	return b
}

// Decode parses a snapshot file taken at log offset at (its name),
// written by samsa or by Kafka.
func Decode(b []byte, at int64) (*State, error) {
	be := binary.BigEndian
	if len(b) < snapshotHeader {
		return nil, fmt.Errorf("%w: %d bytes", ErrBadSnapshot, len(b))
	}
	version := be.Uint16(b)
	if version != snapshotVersion && version != legacySnapshotVersion {
		return nil, fmt.Errorf("%w: version %d, this broker reads 1 (Kafka's) and 2", ErrBadSnapshot, version)
	}
	if got, want := crc32.Checksum(b[6:], crcTable), be.Uint32(b[2:]); got != want {
		return nil, fmt.Errorf("%w: crc %08x, want %08x", ErrBadSnapshot, got, want)
	}
	if n := int64(int32(be.Uint32(b[6:]))); version == snapshotVersion && n >= 0 &&
		int64(len(b)) == snapshotHeader+n*snapshotEntrySize {
		return decodeEntries(b[snapshotHeader:], int(n))
	}
	s, offset, err := decodeLegacy(b, version)
	if err == nil && offset != at {
		err = fmt.Errorf("%w: taken at offset %d, named %d", ErrBadSnapshot, offset, at)
	}
	return s, err
}

// decodeEntries reads n entries of Kafka's layout. Entries of one
// producer id come oldest batch first; the last one's epoch, coordinator
// epoch, timestamp and open transaction are the producer's.
func decodeEntries(rest []byte, n int) (*State, error) {
	be := binary.BigEndian
	s := New()
	for range n {
		id := int64(be.Uint64(rest))
		lastSeq := int32(be.Uint32(rest[10:]))
		lastOffset := int64(be.Uint64(rest[14:]))
		delta := int32(be.Uint32(rest[22:]))
		ts := int64(be.Uint64(rest[26:]))
		p := s.producers[id]
		if p == nil {
			p = &Producer{}
			s.producers[id] = p
		}
		p.Epoch = int16(be.Uint16(rest[8:]))
		p.LastTimestamp = ts
		p.CoordinatorEpoch = int32(be.Uint32(rest[34:]))
		p.TxnFirstOffset = int64(be.Uint64(rest[38:]))
		rest = rest[snapshotEntrySize:]
		if lastSeq < 0 && lastOffset < 0 {
			continue // a producer without a batch
		}
		if delta < 0 || lastSeq < delta || lastOffset < int64(delta) {
			return nil, fmt.Errorf("%w: producer %d batch %d..%d (delta %d)", ErrBadSnapshot, id, lastOffset-int64(delta), lastOffset, delta)
		}
		r := BatchRecord{FirstSeq: lastSeq - delta, LastSeq: lastSeq, FirstOffset: lastOffset - int64(delta), LastOffset: lastOffset, Timestamp: ts}
		if k := len(p.Batches); k > 0 && p.Batches[k-1].LastOffset >= r.FirstOffset {
			return nil, fmt.Errorf("%w: producer %d batches out of order", ErrBadSnapshot, id)
		}
		p.Batches = append(p.Batches, r)
		if len(p.Batches) > BatchesToRetain {
			p.Batches = p.Batches[1:]
		}
	}
	for id, p := range s.producers {
		if p.TxnFirstOffset >= 0 {
			s.openTxn(id, p, p.TxnFirstOffset)
		} else if p.TxnFirstOffset != -1 {
			return nil, fmt.Errorf("%w: transaction first offset %d", ErrBadSnapshot, p.TxnFirstOffset)
		}
	}
	return s, nil
}

// decodeLegacy reads samsa's earlier layouts (version 1 and 2, checked
// already): version int16, crc uint32, offset int64, producer count
// int32, then per producer, sorted by id: id int64, epoch int16,
// lastTimestamp int64, (version 2) coordinatorEpoch int32, txnFirstOffset
// int64, batch count int8, then per batch: firstSeq int32, lastSeq int32,
// firstOffset int64, lastOffset int64, timestamp int64. It returns the
// offset the snapshot was taken at.
func decodeLegacy(b []byte, version uint16) (*State, int64, error) {
	be := binary.BigEndian
	if len(b) < 18 {
		return nil, 0, fmt.Errorf("%w: %d bytes", ErrBadSnapshot, len(b))
	}
	offset := int64(be.Uint64(b[6:]))
	n := int(be.Uint32(b[14:]))
	rest := b[18:]
	const batchSize = 32
	producerSize := 19
	if version >= 2 {
		producerSize += 12
	}
	if n < 0 || n > len(rest)/producerSize {
		return nil, 0, fmt.Errorf("%w: producer count %d", ErrBadSnapshot, n)
	}
	s := New()
	prevID := int64(-1 << 63)
	for i := range n {
		if len(rest) < producerSize {
			return nil, 0, fmt.Errorf("%w: truncated", ErrBadSnapshot)
		}
		id := int64(be.Uint64(rest))
		if i > 0 && id <= prevID {
			return nil, 0, fmt.Errorf("%w: producer ids out of order", ErrBadSnapshot)
		}
		prevID = id
		p := &Producer{Epoch: int16(be.Uint16(rest[8:])), LastTimestamp: int64(be.Uint64(rest[10:])), TxnFirstOffset: -1}
		if version >= 2 {
			p.CoordinatorEpoch = int32(be.Uint32(rest[18:]))
			if first := int64(be.Uint64(rest[22:])); first >= 0 {
				s.openTxn(id, p, first)
			} else if first != -1 {
				return nil, 0, fmt.Errorf("%w: transaction first offset %d", ErrBadSnapshot, first)
			}
		}
		nb := int(rest[producerSize-1])
		rest = rest[producerSize:]
		if nb > BatchesToRetain || len(rest) < nb*batchSize {
			return nil, 0, fmt.Errorf("%w: batch count %d", ErrBadSnapshot, nb)
		}
		for range nb {
			p.Batches = append(p.Batches, BatchRecord{
				FirstSeq:    int32(be.Uint32(rest)),
				LastSeq:     int32(be.Uint32(rest[4:])),
				FirstOffset: int64(be.Uint64(rest[8:])),
				LastOffset:  int64(be.Uint64(rest[16:])),
				Timestamp:   int64(be.Uint64(rest[24:])),
			})
			rest = rest[batchSize:]
		}
		s.producers[id] = p
	}
	if len(rest) != 0 {
		return nil, 0, fmt.Errorf("%w: %d trailing bytes", ErrBadSnapshot, len(rest))
	}
	return s, offset, nil
}
