package wire

import (
	"encoding/binary"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// samsa's durable replication tags: two tagged fields of its own in Fetch
// v12+ (the flexible versions), one in a follower's request partition and
// one in the leader's answer for it. Tagged fields a broker does not know
// are skipped by every Kafka parser (Apache Kafka keeps them as unknown
// tagged fields, kmsg in UnknownTags), so a Kafka 3.9 leader ignores the
// first and a Kafka 3.9 follower the second. The tag number is far above
// the ones Kafka has used (0-2) so it will not collide with a future
// Kafka field.
//
// FetchDurableEndTag in a FetchRequest partition is the follower's
// durable end offset for it (int64, big endian): every offset below is
// fsynced on the follower. The fetch offset stays what it holds and
// where the leader reads from. A samsa leader counts the durable end as
// the follower's position for the high watermark and the ISR, and
// answers with FetchDurableHonouredTag in that partition (one byte,
// the scheme's version, 1), so the follower knows it may fetch past what
// it has made durable. Without the answer (a Kafka leader, or a samsa
// without the scheme) a follower keeps its fetch offset at its durable
// end.
const (
	FetchDurableEndTag      = 10000
	FetchDurableHonouredTag = 10000
	// FetchDurableScheme is the version a leader answers with.
	FetchDurableScheme = 1
)

// SetFetchDurableEnd tags a fetch request partition with end.
func SetFetchDurableEnd(tags *kmsg.Tags, end int64) {
	tags.Set(FetchDurableEndTag, binary.BigEndian.AppendUint64(nil, uint64(end)))
}

// FetchDurableEnd reads a fetch request partition's durable end: false
// when the tag is absent or malformed (the partition is then a Kafka
// follower's: its fetch offset is its position).
func FetchDurableEnd(tags *kmsg.Tags) (int64, bool) {
	v, ok := tagValue(tags, FetchDurableEndTag)
	if !ok || len(v) != 8 {
		return 0, false
	}
	end := int64(binary.BigEndian.Uint64(v))
	return end, end >= 0
}

// FetchDurableHonoured reports whether a fetch response partition says
// the leader counted the durable end the request gave.
func FetchDurableHonoured(tags *kmsg.Tags) bool {
	v, ok := tagValue(tags, FetchDurableHonouredTag)
	return ok && len(v) == 1 && v[0] >= FetchDurableScheme
}

func tagValue(tags *kmsg.Tags, key uint32) ([]byte, bool) {
	if tags.Len() == 0 {
		return nil, false
	}
	var out []byte
	found := false
	tags.Each(func(k uint32, v []byte) {
		if k == key {
			out, found = v, true
		}
	})
	return out, found
}
