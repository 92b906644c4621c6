package group

import (
	"reflect"
	"testing"
)

// The decoders read bytes from disk that anything may have written (Kafka,
// an older samsa, a bit flip): they must never panic, and whatever they
// accept must survive a re-encode at the version they read.

func FuzzDecodeKey(f *testing.F) {
	f.Add(OffsetKeyBytes("group", "topic", 1))
	f.Add(GroupKeyBytes("group"))
	f.Add([]byte{0, 3, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		k, err := DecodeKey(b)
		if err != nil {
			return
		}
		switch k.Kind {
		case KeyOffset:
			again, err := DecodeKey(OffsetKeyBytes(k.Group, k.Topic, k.Partition))
			if err != nil || again.Group != k.Group || again.Topic != k.Topic || again.Partition != k.Partition {
				t.Fatalf("offset key re-encode: %+v vs %+v (%v)", again, k, err)
			}
		case KeyGroup:
			again, err := DecodeKey(GroupKeyBytes(k.Group))
			if err != nil || again.Group != k.Group {
				t.Fatalf("group key re-encode: %+v vs %+v (%v)", again, k, err)
			}
		case KeyConsumer:
			var member *string
			if k.Member != "" || k.Version == consumerMemberMetaKey || k.Version == consumerTargetMemberKey || k.Version == consumerCurrentAssignmentKey {
				member = &k.Member
			}
			again, err := DecodeKey(consumerKey(k.Version, k.Group, member))
			if err != nil || again != k {
				t.Fatalf("consumer key re-encode: %+v vs %+v (%v)", again, k, err)
			}
		case KeyOther:
			if k.Version < 9 {
				t.Fatalf("KeyOther with version %d", k.Version)
			}
		default:
			t.Fatalf("decoded key of kind %d", k.Kind)
		}
	})
}

func FuzzDecodeOffsetValue(f *testing.F) {
	for v := int16(0); v <= 4; v++ {
		f.Add(appendOffsetValue(nil, OffsetValue{Offset: 1, LeaderEpoch: 2, Metadata: "m", CommitTimestamp: 3, ExpireTimestamp: 4}, v))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := DecodeOffsetValue(b)
		if err != nil {
			return
		}
		version := min(int16(b[0])<<8|int16(b[1]), maxKnownValueVersion)
		again, err := DecodeOffsetValue(appendOffsetValue(nil, v, version))
		if err != nil || again != v {
			t.Fatalf("re-encode at v%d: %+v vs %+v (%v)", version, again, v, err)
		}
	})
}

func FuzzDecodeGroupValue(f *testing.F) {
	for v := int16(0); v <= 4; v++ {
		f.Add(appendGroupValue(nil, sampleGroupValue(), v))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := DecodeGroupValue(b)
		if err != nil {
			return
		}
		version := min(int16(b[0])<<8|int16(b[1]), maxKnownValueVersion)
		again, err := DecodeGroupValue(appendGroupValue(nil, v, version))
		if err != nil {
			t.Fatalf("re-encode at v%d failed: %v", version, err)
		}
		if !reflect.DeepEqual(normalizeGroup(again), normalizeGroup(v)) {
			t.Fatalf("re-encode at v%d:\n%+v\n%+v", version, again, v)
		}
	})
}

// normalizeGroup treats nil and empty byte slices alike (the wire format
// does not distinguish them for non-nullable bytes).
func normalizeGroup(v GroupValue) GroupValue {
	for i := range v.Members {
		if len(v.Members[i].Subscription) == 0 {
			v.Members[i].Subscription = nil
		}
		if len(v.Members[i].Assignment) == 0 {
			v.Members[i].Assignment = nil
		}
	}
	if len(v.Members) == 0 {
		v.Members = nil
	}
	return v
}
