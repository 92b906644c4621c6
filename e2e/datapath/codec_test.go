package datapath

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// codecIDs are Kafka's compression ids (the low three bits of a record
// batch's attributes).
var codecIDs = map[string]int16{"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}

// checkStoredCodec fetches the start of each partition with a raw Fetch
// request and fails t unless the batches there are compressed with codec:
// the broker keeps batches as the producer compressed them. Producers may
// send a batch uncompressed when compressing would not shrink it
// (librdkafka does, for small batches), so uncompressed batches are
// allowed as long as some batch carries the codec.
func checkStoredCodec(t *testing.T, addr, topic string, partitions int32, codec string) {
	t.Helper()
	want, ok := codecIDs[codec]
	if !ok {
		t.Fatalf("unknown codec %q", codec)
	}
	cl := newClient(t, addr)
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID = -1
	req.MaxWaitMillis = 100
	req.MaxBytes = 4 << 20
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic = topic
	ft.TopicID = topicID(t, cl, topic) // Fetch 13+ names topics by id
	for p := range partitions {
		fp := kmsg.NewFetchRequestTopicPartition()
		fp.Partition = p
		fp.FetchOffset = 0
		fp.PartitionMaxBytes = 256 << 10
		fp.CurrentLeaderEpoch = -1
		fp.LogStartOffset = -1
		ft.Partitions = append(ft.Partitions, fp)
	}
	req.Topics = append(req.Topics, ft)
	resp, err := req.RequestWith(deadline(t, 20*time.Second), cl)
	if err != nil {
		t.Fatalf("raw fetch: %v", err)
	}
	batches, withCodec := 0, 0
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			if rp.ErrorCode != 0 {
				t.Errorf("raw fetch %s/%d: error code %d", topic, rp.Partition, rp.ErrorCode)
				continue
			}
			raw := rp.RecordBatches
			for len(raw) >= 61 {
				var b kmsg.RecordBatch
				if err := b.ReadFrom(raw); err != nil {
					break // a batch cut at the size limit ends the useful part
				}
				batches++
				switch got := b.Attributes & 0x07; got {
				case want:
					withCodec++
				case 0:
				default:
					t.Errorf("%s/%d batch at offset %d is stored with codec %d, produced with %s (%d)",
						topic, rp.Partition, b.FirstOffset, got, codec, want)
					return
				}
				raw = raw[12+int(b.Length):]
			}
		}
	}
	if batches == 0 {
		t.Errorf("raw fetch of %s returned no complete batch", topic)
	} else if withCodec == 0 {
		t.Errorf("none of the %d batches fetched from %s is compressed; they were produced with %s", batches, topic, codec)
	}
}
