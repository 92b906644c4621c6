package datapath

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/testkit"
	"github.com/samsa-io/samsa/wire/batchtest"
)

// KIP-467 per-record errors: 100 records, 10 of them keyless, to a
// compacted topic. The broker answers INVALID_RECORD with record_errors
// naming exactly the 10 keyless records and an error message (Produce
// v8+), as Kafka's LogValidator does; a topic with
// message.timestamp.before.max.ms likewise names the records too old.
//
// franz-go does not read record_errors (kgo fails every record of the
// batch with the partition's code, whatever the broker lists), so the
// record errors are checked on the raw response of a Produce sent
// through the kgo client, and kgo's own producer is checked for what it
// does: all 100 fail INVALID_RECORD, none is written, and the 90 keyed
// records produce fine on their own. (The Java producer reads them: the
// listed records fail with InvalidRecordException and their message, the
// rest with a KafkaException for sharing the batch.)
func TestProduceRecordErrors(t *testing.T) {
	b := sharedBroker(t)
	requireDataPath(t, b.Addr())
	compact := "compact"
	topic := topicName(t, "compacted")
	createTopic(t, b.Addr(), topic, 1, map[string]*string{"cleanup.policy": &compact})

	now := time.Now().UnixMilli()
	recs := make([]batchtest.Record, 100)
	var keyless []int32
	for i := range recs {
		recs[i] = batchtest.Record{Value: []byte("value-" + itoa(i)), Timestamp: now}
		if i%10 == 3 {
			keyless = append(keyless, int32(i))
		} else {
			recs[i].Key = []byte("key-" + itoa(i))
		}
	}

	cl := newClient(t, b.Addr())
	t.Run("raw", func(t *testing.T) {
		p := rawProduce(t, cl, topic, batchtest.Build(recs))
		if got := errorIndexes(t, p); p.ErrorCode != kerr.InvalidRecord.Code || !slices.Equal(got, keyless) {
			t.Fatalf("code %d, record errors %v; want INVALID_RECORD naming %v", p.ErrorCode, got, keyless)
		}
		if p.ErrorMessage == nil || *p.ErrorMessage == "" {
			t.Error("no error message")
		}
	})

	t.Run("timestamps", func(t *testing.T) {
		before := "60000"
		topic := topicName(t, "before")
		createTopic(t, b.Addr(), topic, 1, map[string]*string{"message.timestamp.before.max.ms": &before})
		old := slices.Clone(recs)
		old[2].Timestamp, old[5].Timestamp = now-10*60_000, now-20*60_000
		p := rawProduce(t, cl, topic, batchtest.Build(old))
		if got := errorIndexes(t, p); p.ErrorCode != kerr.InvalidTimestamp.Code || !slices.Equal(got, []int32{2, 5}) {
			t.Fatalf("code %d, record errors %v; want INVALID_TIMESTAMP naming [2 5]", p.ErrorCode, got)
		}
	})

	t.Run("kgo", func(t *testing.T) {
		pcl := newClient(t, b.Addr(), kgo.ManualFlushing(), kgo.DefaultProduceTopic(topic))
		var offsets []int64
		produce := func(recs []batchtest.Record) []error {
			errs := make([]error, len(recs))
			offsets = make([]int64, len(recs))
			var wg sync.WaitGroup
			for i, r := range recs {
				wg.Add(1)
				pcl.Produce(context.Background(), &kgo.Record{Key: r.Key, Value: r.Value}, func(r *kgo.Record, err error) {
					errs[i], offsets[i] = err, r.Offset
					wg.Done()
				})
			}
			if err := pcl.Flush(deadline(t, 20*time.Second)); err != nil {
				t.Fatalf("flush: %v", err)
			}
			wg.Wait()
			return errs
		}
		for i, err := range produce(recs) {
			if !errors.Is(err, kerr.InvalidRecord) {
				t.Fatalf("record %d: %v, want INVALID_RECORD (kgo fails the whole batch)", i, err)
			}
		}
		keyed := slices.DeleteFunc(slices.Clone(recs), func(r batchtest.Record) bool { return r.Key == nil })
		for i, err := range produce(keyed) {
			// Nothing of the refused batch was written: the keyed
			// records are the partition's first (the raw subtest's
			// batch was refused too).
			if err != nil || offsets[i] != int64(i) {
				t.Fatalf("keyed record %d: offset %d, %v; want offset %d", i, offsets[i], err, i)
			}
		}
	})
}

// rawProduce sends one batch to partition 0 of topic at the highest
// Produce version the client and broker share (v8+ has record_errors).
func rawProduce(t *testing.T, cl *kgo.Client, topic string, batch []byte) kmsg.ProduceResponseTopicPartition {
	t.Helper()
	p, version, err := testkit.ProduceBatch(deadline(t, 20*time.Second), cl, topic, 0, batch)
	if err != nil {
		t.Fatalf("produce: %v", err)
	}
	if version < 8 {
		t.Fatalf("produce went out as v%d; record_errors need v8+", version)
	}
	return p
}

// errorIndexes lists a partition answer's record errors, failing t for
// one without a message.
func errorIndexes(t *testing.T, p kmsg.ProduceResponseTopicPartition) []int32 {
	t.Helper()
	var got []int32
	for _, e := range p.ErrorRecords {
		got = append(got, e.RelativeOffset)
		if e.ErrorMessage == nil || *e.ErrorMessage == "" {
			t.Errorf("record %d listed without a message", e.RelativeOffset)
		}
	}
	return got
}
