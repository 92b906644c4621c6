package datapath

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestOffsetsAPIs writes n records of the model (record i in partition
// i % 3 at offset i / 3, timestamp base+i) and checks ListOffsets
// (earliest, latest, max timestamp, by timestamp), OffsetForLeaderEpoch
// and DeleteRecords against what that layout implies, as Apache Kafka
// answers them: a timestamp lookup names the first record at or after
// the timestamp, and its timestamp, also inside a compressed batch.
func TestOffsetsAPIs(t *testing.T) {
	b := sharedBroker(t)
	requireDataPath(t, b.Addr())
	for _, codec := range []struct {
		name  string
		codec kgo.CompressionCodec
	}{{"none", kgo.NoCompression()}, {"snappy", kgo.SnappyCompression()}} {
		t.Run(codec.name, func(t *testing.T) { testOffsetsAPIs(t, b.Addr(), codec.name, codec.codec) })
	}
}

func testOffsetsAPIs(t *testing.T, addr, codecName string, codec kgo.CompressionCodec) {
	const partitions = 3
	n := 30_000
	topic := topicName(t, "offsets")
	createTopic(t, addr, topic, partitions, nil)
	base := timeBase()
	ctx := deadline(t, 2*time.Minute)
	if err := produceFranz(ctx, franzProducer(t, addr, kgo.ProducerBatchCompression(codec)),
		topic, partitions, n, base, codecName, nil); err != nil {
		t.Fatalf("produce: %v", err)
	}
	cl := newClient(t, addr)
	perPartition := func(p int32) int64 { return int64((n - int(p) + partitions - 1) / partitions) }

	t.Run("ListOffsets", func(t *testing.T) {
		type query struct {
			name      string
			timestamp int64
			// want per partition: offset and timestamp (-1, -1: none)
			want func(p int32) (int64, int64)
		}
		byTime := func(k int) func(p int32) (int64, int64) {
			return func(p int32) (int64, int64) {
				i := k + (int(p)-k%partitions+partitions)%partitions // first index >= k in p
				if i >= n {
					return -1, -1
				}
				return int64(i / partitions), recordTime(base, i).UnixMilli()
			}
		}
		queries := []query{
			{"Earliest", -2, func(int32) (int64, int64) { return 0, -1 }},
			{"Latest", -1, func(p int32) (int64, int64) { return perPartition(p), -1 }},
			{"MaxTimestamp", -3, func(p int32) (int64, int64) {
				last := int(perPartition(p)-1)*partitions + int(p)
				return perPartition(p) - 1, recordTime(base, last).UnixMilli()
			}},
			{"BeforeFirst", base.UnixMilli() - 1000, byTime(0)},
		}
		for _, k := range []int{0, 1, 2, 3, 7, 12_345, 29_997, 29_998, 29_999, 30_000} {
			queries = append(queries, query{"Time+" + itoa(k), recordTime(base, k).UnixMilli(), byTime(k)})
		}
		wrong := 0
		for _, q := range queries {
			resp := listOffsets(t, cl, topic, partitions, q.timestamp)
			for p := range int32(partitions) {
				got := resp[p]
				wantOffset, wantTime := q.want(p)
				if got.ErrorCode != 0 || got.Offset != wantOffset || (wantTime != -1 && got.Timestamp != wantTime) ||
					(q.timestamp >= 0 && wantOffset == -1 && got.Timestamp != -1) {
					if wrong++; wrong > 12 {
						continue
					}
					t.Errorf("%s (timestamp %d) partition %d: error %d offset %d timestamp %d; want offset %d timestamp %d",
						q.name, q.timestamp, p, got.ErrorCode, got.Offset, got.Timestamp, wantOffset, wantTime)
				}
			}
		}
	})

	t.Run("OffsetForLeaderEpoch", func(t *testing.T) {
		epochs := leaderEpochs(t, cl, topic)
		req := kmsg.NewPtrOffsetForLeaderEpochRequest()
		req.ReplicaID = -1
		rt := kmsg.NewOffsetForLeaderEpochRequestTopic()
		rt.Topic = topic
		for p := range int32(partitions) {
			rp := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
			rp.Partition, rp.CurrentLeaderEpoch, rp.LeaderEpoch = p, epochs[p], epochs[p]
			rt.Partitions = append(rt.Partitions, rp)
		}
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatalf("OffsetForLeaderEpoch: %v", err)
		}
		seen := 0
		for _, tt := range resp.Topics {
			for _, rp := range tt.Partitions {
				seen++
				if rp.ErrorCode != 0 || rp.LeaderEpoch != epochs[rp.Partition] || rp.EndOffset != perPartition(rp.Partition) {
					t.Errorf("partition %d: error %d epoch %d end offset %d; want epoch %d end offset %d",
						rp.Partition, rp.ErrorCode, rp.LeaderEpoch, rp.EndOffset, epochs[rp.Partition], perPartition(rp.Partition))
				}
			}
		}
		if seen != partitions {
			t.Errorf("answered %d partitions, want %d", seen, partitions)
		}
	})

	t.Run("DeleteRecords", func(t *testing.T) {
		adm := kadm.NewClient(cl)
		const cut = 1000 // in partition 0
		var os kadm.Offsets
		os.Add(kadm.Offset{Topic: topic, Partition: 0, At: cut})
		os.Add(kadm.Offset{Topic: topic, Partition: 1, At: perPartition(1) + 10}) // beyond the end
		resp, err := adm.DeleteRecords(ctx, os)
		if err != nil {
			t.Fatalf("DeleteRecords: %v", err)
		}
		if r, ok := resp.Lookup(topic, 0); !ok || r.Err != nil || r.LowWatermark != cut {
			t.Errorf("DeleteRecords partition 0 to %d: %+v", cut, r)
		}
		if r, ok := resp.Lookup(topic, 1); !ok || !errors.Is(r.Err, kerr.OffsetOutOfRange) {
			t.Errorf("DeleteRecords partition 1 beyond its end: %+v, want OFFSET_OUT_OF_RANGE", r)
		}
		if got := listOffsets(t, cl, topic, partitions, -2); got[0].Offset != cut || got[1].Offset != 0 {
			t.Errorf("earliest offsets after DeleteRecords: p0 %d, p1 %d; want %d, 0", got[0].Offset, got[1].Offset, cut)
		}
		// A timestamp inside the deleted range resolves to the first
		// record still there.
		if got := listOffsets(t, cl, topic, partitions, base.UnixMilli()); got[0].Offset != cut ||
			got[0].Timestamp != recordTime(base, cut*partitions).UnixMilli() {
			t.Errorf("timestamp lookup into the deleted range: offset %d timestamp %d; want %d, %d",
				got[0].Offset, got[0].Timestamp, cut, recordTime(base, cut*partitions).UnixMilli())
		}
		// Fetching below the log start is out of range.
		if code := fetchErrorAt(t, cl, topic, 0, cut-1); code != kerr.OffsetOutOfRange.Code {
			t.Errorf("fetch at offset %d below the log start %d: error %d, want OFFSET_OUT_OF_RANGE", cut-1, cut, code)
		}
		// A consumer from the start sees the records from the cut on.
		v := newVerifier(n, partitions, codecName, base)
		for p := range int32(partitions) {
			v.nextOff[p] = 0
		}
		v.nextOff[0] = cut
		v.lastIndex[0] = cut*partitions - partitions
		for i := 0; i < cut*partitions; i += partitions {
			v.seen[i], v.count = true, v.count+1 // deleted: not expected
		}
		consumeFranzFrom(ctx, t, addr, topic, kgo.NewOffset().AtStart(), partitions, v)
		if msg := v.result(); msg != "" {
			t.Error(msg)
		}
	})
}

// listOffsets sends one ListOffsets request for every partition of topic
// at timestamp and returns the answers by partition.
func listOffsets(t *testing.T, cl *kgo.Client, topic string, partitions int32, timestamp int64) map[int32]kmsg.ListOffsetsResponseTopicPartition {
	t.Helper()
	req := kmsg.NewPtrListOffsetsRequest()
	req.ReplicaID = -1
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	for p := range partitions {
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Partition, rp.CurrentLeaderEpoch, rp.Timestamp = p, -1, timestamp
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(deadline(t, 20*time.Second), cl)
	if err != nil {
		t.Fatalf("ListOffsets at %d: %v", timestamp, err)
	}
	out := map[int32]kmsg.ListOffsetsResponseTopicPartition{}
	for _, tt := range resp.Topics {
		for _, p := range tt.Partitions {
			out[p.Partition] = p
		}
	}
	if len(out) != int(partitions) {
		t.Fatalf("ListOffsets at %d answered %d partitions, want %d", timestamp, len(out), partitions)
	}
	return out
}

// leaderEpochs reads each partition's leader epoch from Metadata.
func leaderEpochs(t *testing.T, cl *kgo.Client, topic string) map[int32]int32 {
	t.Helper()
	req := kmsg.NewPtrMetadataRequest()
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, mt)
	md, err := req.RequestWith(deadline(t, 20*time.Second), cl)
	if err != nil || len(md.Topics) != 1 {
		t.Fatalf("metadata: %v", err)
	}
	out := map[int32]int32{}
	for _, p := range md.Topics[0].Partitions {
		out[p.Partition] = p.LeaderEpoch
	}
	return out
}

// fetchErrorAt fetches one partition at offset and returns the error code.
func fetchErrorAt(t *testing.T, cl *kgo.Client, topic string, partition int32, offset int64) int16 {
	t.Helper()
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID, req.MaxWaitMillis, req.MaxBytes = -1, 100, 1<<20
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic, ft.TopicID = topic, topicID(t, cl, topic)
	fp := kmsg.NewFetchRequestTopicPartition()
	fp.Partition, fp.FetchOffset, fp.PartitionMaxBytes = partition, offset, 1<<20
	fp.CurrentLeaderEpoch, fp.LogStartOffset = -1, -1
	ft.Partitions = append(ft.Partitions, fp)
	req.Topics = append(req.Topics, ft)
	resp, err := req.RequestWith(deadline(t, 20*time.Second), cl)
	if err != nil {
		t.Fatalf("fetch: %v", err)
	}
	for _, tt := range resp.Topics {
		for _, p := range tt.Partitions {
			return p.ErrorCode
		}
	}
	t.Fatalf("fetch answered no partition")
	return 0
}

// consumeFranzFrom is consumeFranz starting every partition at start.
func consumeFranzFrom(ctx context.Context, t testing.TB, addr, topic string, start kgo.Offset, partitions int32, v *verifier) {
	offsets := make(map[int32]kgo.Offset, partitions)
	for p := range partitions {
		offsets[p] = start
	}
	consumeWith(ctx, t, addr, topic, offsets, v)
}
