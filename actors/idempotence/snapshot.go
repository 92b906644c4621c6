package idempotence

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"sort"
)

// Snapshot layout (big-endian). These constants are part of the on-disk
// format; a change needs a new version and a reader for the old one.
//
//	0  version int16 (2; 1 is still read)
//	2  crc uint32: CRC-32C of everything after this field
//	6  offset int64: the log offset the snapshot was taken at (replay from here)
//	14 producer count int32
//	then per producer, sorted by id:
//	   id int64, epoch int16, lastTimestamp int64,
//	   (version 2) coordinatorEpoch int32, txnFirstOffset int64 (-1: none open),
//	   batch count int8,
//	   then per batch: firstSeq int32, lastSeq int32, firstOffset int64,
//	   lastOffset int64, timestamp int64
const snapshotVersion = 2

// ErrBadSnapshot reports a snapshot that cannot be trusted; the caller
// rebuilds producer state by replaying the whole log instead.
var ErrBadSnapshot = errors.New("idempotence: corrupt producer-state snapshot")

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// Encode serializes the state as of log offset offset.
func (s *State) Encode(offset int64) []byte {
	ids := make([]int64, 0, len(s.producers))
	for id := range s.producers {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	be := binary.BigEndian
	b := make([]byte, 6, 18+len(ids)*64)
	be.PutUint16(b, snapshotVersion)
	b = be.AppendUint64(b, uint64(offset))
	b = be.AppendUint32(b, uint32(len(ids)))
	for _, id := range ids {
		p := s.producers[id]
		b = be.AppendUint64(b, uint64(id))
		b = be.AppendUint16(b, uint16(p.Epoch))
		b = be.AppendUint64(b, uint64(p.LastTimestamp))
		b = be.AppendUint32(b, uint32(p.CoordinatorEpoch))
		b = be.AppendUint64(b, uint64(p.TxnFirstOffset))
		b = append(b, byte(len(p.Batches)))
		for _, r := range p.Batches {
			b = be.AppendUint32(b, uint32(r.FirstSeq))
			b = be.AppendUint32(b, uint32(r.LastSeq))
			b = be.AppendUint64(b, uint64(r.FirstOffset))
			b = be.AppendUint64(b, uint64(r.LastOffset))
			b = be.AppendUint64(b, uint64(r.Timestamp))
		}
	}
	be.PutUint32(b[2:], crc32.Checksum(b[6:], crcTable))
	return b
}

// Decode parses a snapshot made by Encode and returns the state and the
// offset to replay the log from.
func Decode(b []byte) (*State, int64, error) {
	be := binary.BigEndian
	if len(b) < 18 {
		return nil, 0, fmt.Errorf("%w: %d bytes", ErrBadSnapshot, len(b))
	}
	version := be.Uint16(b)
	if version != 1 && version != snapshotVersion {
		return nil, 0, fmt.Errorf("%w: version %d", ErrBadSnapshot, version)
	}
	if got, want := crc32.Checksum(b[6:], crcTable), be.Uint32(b[2:]); got != want {
		return nil, 0, fmt.Errorf("%w: crc %08x, want %08x", ErrBadSnapshot, got, want)
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
