package group

import "testing"

// The expected values were printed by a single-file Java 17 program calling
// String#hashCode and Kafka's Utils.abs formula ("java Hash.java").
func TestPartitionForMatchesJava(t *testing.T) {
	cases := []struct {
		id    string
		hash  int32
		mod50 int32
		mod7  int32
	}{
		{"", 0, 0, 0},
		{"a", 97, 47, 6},
		{"my-group", -1906497762, 12, 1},
		{"console-consumer-12345", 158455506, 6, 6},
		{"test-group", 627841412, 12, 2},
		{"samsa", 109203053, 3, 1},
		{"gr\u00fc\u00dfe", 98768023, 23, 4},
		{"\u65e5\u672c\u8a9e\u30b0\u30eb\u30fc\u30d7", -305235731, 31, 3},
		{"\U0001F600emoji", -1233692477, 27, 3}, // a surrogate pair in Java
		{"polygenelubricants", -2147483648, 0, 0},
		{"GydZG_", -2147483648, 0, 0},
		{"DESIGNING WORKHOUSES", -2147483648, 0, 0},
	}
	for _, c := range cases {
		if got := JavaStringHashCode(c.id); got != c.hash {
			t.Errorf("JavaStringHashCode(%q) = %d, want %d", c.id, got, c.hash)
		}
		if got := PartitionFor(c.id, DefaultOffsetsTopicPartitions); got != c.mod50 {
			t.Errorf("PartitionFor(%q, 50) = %d, want %d", c.id, got, c.mod50)
		}
		if got := PartitionFor(c.id, 7); got != c.mod7 {
			t.Errorf("PartitionFor(%q, 7) = %d, want %d", c.id, got, c.mod7)
		}
	}
}

// "my-group" hashes negative: Utils.abs gives partition 12, the common
// mistake h & 0x7fffffff would give 36.
func TestPartitionForIsNotMaskedHash(t *testing.T) {
	h := JavaStringHashCode("my-group")
	if masked := (h & 0x7fffffff) % 50; masked == PartitionFor("my-group", 50) {
		t.Fatalf("masked hash and Utils.abs agree (%d); the case does not discriminate", masked)
	}
	if got := PartitionFor("my-group", 0); got != 0 {
		t.Fatalf("PartitionFor with 0 partitions = %d, want 0", got)
	}
}

func TestPartitionForRange(t *testing.T) {
	for i := range 2000 {
		id := string(rune('a'+i%26)) + string(rune(0x4e00+i))
		p := PartitionFor(id, 50)
		if p < 0 || p >= 50 {
			t.Fatalf("PartitionFor(%q) = %d out of range", id, p)
		}
	}
}
