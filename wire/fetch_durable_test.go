package wire

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestFetchDurableEndTag: a follower's durable end survives the request's
// encoding and DecodeRequest at every flexible Fetch version, beside
// Kafka's own partition tags, and a fetch without it (a Kafka follower's)
// reads as absent.
func TestFetchDurableEndTag(t *testing.T) {
	for v := int16(12); v <= FetchMaxVersion; v++ {
		for _, tc := range []struct {
			end  int64
			tag  bool
			want bool
		}{{end: 1234567890123, tag: true, want: true}, {end: 0, tag: true, want: true}, {tag: false}} {
			req := kmsg.NewPtrFetchRequest()
			req.Version = v
			topic := kmsg.NewFetchRequestTopic()
			topic.Topic, topic.TopicID = "t", [16]byte{7}
			p := kmsg.NewFetchRequestTopicPartition()
			p.Partition, p.FetchOffset, p.ReplicaDirectoryID = 3, 99, [16]byte{9}
			if tc.tag {
				SetFetchDurableEnd(&p.UnknownTags, tc.end)
			}
			topic.Partitions = append(topic.Partitions, p)
			req.Topics = append(req.Topics, topic)
			decoded, err := DecodeRequest(encodeFrame(req, 5, "follower"))
			if err != nil {
				t.Fatalf("v%d: %v", v, err)
			}
			got := decoded.Body.(*kmsg.FetchRequest).Topics[0].Partitions[0]
			end, ok := FetchDurableEnd(&got.UnknownTags)
			if ok != tc.want || ok && end != tc.end || got.FetchOffset != 99 {
				t.Fatalf("v%d: durable end %d %v (fetch offset %d), want %d %v", v, end, ok, got.FetchOffset, tc.end, tc.want)
			}
			if v >= 17 && got.ReplicaDirectoryID != [16]byte{9} {
				t.Fatalf("v%d: Kafka's own tag lost beside samsa's", v)
			}
		}
	}
}

// TestFetchDurableTagsMalformed: a tag of the right number but the wrong
// size (another implementation's) is not taken as samsa's.
func TestFetchDurableTagsMalformed(t *testing.T) {
	var tags kmsg.Tags
	tags.Set(FetchDurableEndTag, []byte{1, 2, 3})
	if _, ok := FetchDurableEnd(&tags); ok {
		t.Fatal("a 3-byte durable end was read")
	}
	tags.Set(FetchDurableEndTag, []byte{0x80, 0, 0, 0, 0, 0, 0, 0})
	if _, ok := FetchDurableEnd(&tags); ok {
		t.Fatal("a negative durable end was read")
	}
	tags.Set(FetchDurableHonouredTag, []byte{0})
	if FetchDurableHonoured(&tags) {
		t.Fatal("scheme 0 was taken as honoured")
	}
}
