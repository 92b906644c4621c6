package datapath

import (
	"strings"
	"testing"
)

// TestVerifierCatches checks that the verifier every round trip relies on
// notices each kind of damage: it runs without a broker.
func TestVerifierCatches(t *testing.T) {
	base := timeBase()
	good := func(i int, offset int64) consumed {
		return consumed{Partition: int32(i % 2), Offset: offset, Key: recordKey(i), Value: recordValue(i),
			Headers:   []header{{idxHeader, indexBytes(i)}, {"codec", []byte("zstd")}},
			Timestamp: recordTime(base, i)}
	}
	feed := func(rs ...consumed) *verifier {
		v := newVerifier(4, 2, "zstd", base)
		for _, r := range rs {
			v.add(r)
		}
		return v
	}
	if msg := feed(good(0, 0), good(1, 0), good(2, 1), good(3, 1)).result(); msg != "" {
		t.Fatalf("a correct stream was rejected: %s", msg)
	}
	flip := good(2, 1)
	flip.Value = append([]byte(nil), flip.Value...)
	flip.Value[3] ^= 1
	late := good(3, 1)
	late.Timestamp = late.Timestamp.Add(1)
	noHeaders := good(3, 1)
	noHeaders.Headers = nil
	for _, tc := range []struct {
		name   string
		stream []consumed
		want   string
	}{
		{"Missing", []consumed{good(0, 0), good(1, 0), good(2, 1)}, "3 of 4 records"},
		{"Duplicate", []consumed{good(0, 0), good(1, 0), good(2, 1), good(2, 2), good(3, 1)}, "delivered twice"},
		{"Gap", []consumed{good(0, 0), good(1, 0), good(2, 2), good(3, 1)}, "not dense"},
		{"Reordered", []consumed{good(2, 0), good(1, 0), good(0, 1), good(3, 1)}, "order lost"},
		{"WrongPartition", []consumed{good(0, 0), good(1, 0), {Partition: 1, Offset: 1, Key: recordKey(2), Value: recordValue(2),
			Headers: good(2, 0).Headers, Timestamp: recordTime(base, 2)}, good(3, 2)}, "belongs in partition"},
		{"FlippedBit", []consumed{good(0, 0), good(1, 0), flip, good(3, 1)}, "value differs"},
		{"Timestamp", []consumed{good(0, 0), good(1, 0), good(2, 1), late}, "timestamp"},
		{"NoHeaders", []consumed{good(0, 0), good(1, 0), good(2, 1), noHeaders}, "no idx header"},
	} {
		if msg := feed(tc.stream...).result(); !strings.Contains(msg, tc.want) {
			t.Errorf("%s: verifier said %q, want it to mention %q", tc.name, msg, tc.want)
		}
	}
}
