package sharegroup

import (
	"testing"

	"github.com/samsa-io/samsa/actors/partition"
)

func TestReadBudgetFollowsRecordSizes(t *testing.T) {
	s := readSizes{}
	p := partKey{"g", TopicPartition{Partition: 1}}
	if got := s.budget(p, 500); got != 500*readRecordBytesGuess*5/4 {
		t.Fatalf("first read of 500 records: %d bytes, want the guess's %d", got, 500*readRecordBytesGuess*5/4)
	}
	s.learn(p, 100, 1100, 120_000) // 1,000 records of 120 bytes with their batches
	if got := s.budget(p, 500); got != 500*120*5/4 {
		t.Fatalf("after reading 120-byte records: %d bytes for 500, want %d", got, 500*120*5/4)
	}
	if got := s.budget(p, 1); got != readBytesMin {
		t.Fatalf("one record: %d bytes, want the floor %d", got, readBytesMin)
	}
	s.learn(p, 0, 1, 1<<30)
	if got := s.budget(p, 500); got != partition.ChunkBytes {
		t.Fatalf("huge records: %d bytes, want at most a chunk (%d)", got, partition.ChunkBytes)
	}
	s.learn(p, 5, 5, 100) // nothing read: keeps what it knew
	if got := s.budget(p, 500); got != partition.ChunkBytes {
		t.Fatalf("an empty read changed the estimate: %d", got)
	}
	if other := (partKey{"g", TopicPartition{Partition: 2}}); s.budget(other, 10) != readBytesMin {
		t.Fatalf("another partition's budget moved: %d", s.budget(other, 10))
	}
}
