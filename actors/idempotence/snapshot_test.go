package idempotence

import (
	"encoding/binary"
	"testing"

	"github.com/samsa-io/samsa/wire"
)

// kafkaEntry is one entry of Kafka's producer snapshot (version 1 of
// ProducerStateManager's schema), as Kafka 3.9.1 writes it.
type kafkaEntry struct {
	id             int64
	epoch          int16
	lastSeq        int32
	lastOffset     int64
	delta          int32
	ts             int64
	coordEpoch     int32
	txnFirstOffset int64
}

// kafkaSnapshot lays entries out as Kafka does: version 1, CRC-32C of
// the rest, entry count, entries.
func kafkaSnapshot(entries ...kafkaEntry) []byte {
	be := binary.BigEndian
	b := make([]byte, 10)
	be.PutUint16(b, 1)
	be.PutUint32(b[6:], uint32(len(entries)))
	for _, e := range entries {
		b = be.AppendUint64(b, uint64(e.id))
		b = be.AppendUint16(b, uint16(e.epoch))
		b = be.AppendUint32(b, uint32(e.lastSeq))
		b = be.AppendUint64(b, uint64(e.lastOffset))
		b = be.AppendUint32(b, uint32(e.delta))
		b = be.AppendUint64(b, uint64(e.ts))
		b = be.AppendUint32(b, uint32(e.coordEpoch))
		b = be.AppendUint64(b, uint64(e.txnFirstOffset))
	}
	be.PutUint32(b[2:], wire.CRC32C(b[6:]))
	return b
}

// A snapshot Kafka wrote loads: each producer's last batch (for
// duplicate detection), epoch, coordinator epoch and open transaction;
// entries come in Kafka's hash order, not sorted.
func TestKafkaSnapshotLoads(t *testing.T) {
	b := kafkaSnapshot(
		kafkaEntry{id: 9, epoch: 2, lastSeq: 14, lastOffset: 120, delta: 4, ts: 777, coordEpoch: 3, txnFirstOffset: 110},
		kafkaEntry{id: 4, epoch: 0, lastSeq: -1, lastOffset: -1, ts: 555, txnFirstOffset: -1},
	)
	s, err := Decode(b, 121)
	if err != nil {
		t.Fatal(err)
	}
	p, ok := s.Producer(9)
	if !ok || p.Epoch != 2 || p.CoordinatorEpoch != 3 || p.LastTimestamp != 777 || len(p.Batches) != 1 {
		t.Fatalf("producer 9: %+v", p)
	}
	if got, want := p.Batches[0], (BatchRecord{FirstSeq: 10, LastSeq: 14, FirstOffset: 116, LastOffset: 120, Timestamp: 777}); got != want {
		t.Fatalf("producer 9's batch %+v, want %+v", got, want)
	}
	if first, ok := s.FirstUnstableOffset(); !ok || first != 110 {
		t.Fatalf("first unstable offset %d %v, want 110", first, ok)
	}
	if c := s.Check(txnHdr(9, 2, 10, 5)); c.Verdict != Duplicate {
		t.Fatalf("the last batch again: %+v, want a duplicate", c)
	}
	if p, ok := s.Producer(4); !ok || len(p.Batches) != 0 || p.LastTimestamp != 555 {
		t.Fatalf("producer 4 (no batch): %+v %v", p, ok)
	}
}

// samsa writes Kafka's layout: one 46-byte entry per remembered batch,
// oldest first, the last carrying the producer's state, so Kafka (which
// keeps the last entry of an id) loads what its own snapshot would hold.
func TestSnapshotIsKafkasLayout(t *testing.T) {
	s := New()
	appendAt(t, s, hdr(7, 1, 0, 3), 10)
	appendAt(t, s, hdr(7, 1, 3, 2), 20)
	b := s.Encode(30)
	want := kafkaSnapshot(
		kafkaEntry{id: 7, epoch: 1, lastSeq: 2, lastOffset: 12, delta: 2, ts: 1010, txnFirstOffset: -1},
		kafkaEntry{id: 7, epoch: 1, lastSeq: 4, lastOffset: 21, delta: 1, ts: 1020, txnFirstOffset: -1},
	)
	if string(b) != string(want) {
		t.Fatalf("snapshot\n% x\nwant Kafka's\n% x", b, want)
	}
	// A batch at or after the snapshot's offset is left to the replay.
	if n := binary.BigEndian.Uint32(s.Encode(20)[6:]); n != 1 {
		t.Fatalf("a snapshot taken at 20 has %d entries, want 1", n)
	}
}
