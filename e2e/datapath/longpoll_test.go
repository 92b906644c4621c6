package datapath

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestFetchLongPoll checks that a fetch with nothing to return waits for
// its max wait, and measures how soon a fetch parked that way is woken by
// a produce: p50/p99 are logged, not asserted; what is asserted is that
// every record arrived long before the 5 s max wait, i.e. the append woke
// the fetch rather than the timer.
func TestFetchLongPoll(t *testing.T) {
	b := sharedBroker(t)
	requireDataPath(t, b.Addr())
	topic := topicName(t, "poll")
	createTopic(t, b.Addr(), topic, 1, nil)

	t.Run("EmptyFetchWaits", func(t *testing.T) {
		cl := newClient(t, b.Addr())
		const maxWait = 500 * time.Millisecond
		req := kmsg.NewPtrFetchRequest()
		req.ReplicaID = -1
		req.MaxWaitMillis = int32(maxWait / time.Millisecond)
		req.MinBytes = 1
		req.MaxBytes = 1 << 20
		ft := kmsg.NewFetchRequestTopic()
		ft.Topic = topic
		ft.TopicID = topicID(t, cl, topic)
		fp := kmsg.NewFetchRequestTopicPartition()
		fp.Partition, fp.FetchOffset, fp.PartitionMaxBytes = 0, 0, 1<<20
		fp.CurrentLeaderEpoch, fp.LogStartOffset = -1, -1
		ft.Partitions = append(ft.Partitions, fp)
		req.Topics = append(req.Topics, ft)
		began := time.Now()
		resp, err := req.RequestWith(deadline(t, 20*time.Second), cl)
		took := time.Since(began)
		if err != nil {
			t.Fatalf("fetch: %v", err)
		}
		if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
			t.Fatalf("fetch answered %d topics", len(resp.Topics))
		}
		p := resp.Topics[0].Partitions[0]
		if p.ErrorCode != 0 || len(p.RecordBatches) != 0 || p.HighWatermark != 0 {
			t.Fatalf("fetch of an empty partition: error %d, %d bytes, high watermark %d", p.ErrorCode, len(p.RecordBatches), p.HighWatermark)
		}
		// The broker must hold an unsatisfiable fetch for max wait (a
		// little early is fine: timers are coarse), or a consumer spins.
		if took < maxWait*8/10 {
			t.Errorf("an empty fetch with max wait %v was answered after %v: the broker does not wait", maxWait, took)
		}
		t.Logf("empty fetch with max wait %v answered after %v", maxWait, took.Round(time.Millisecond))
	})

	t.Run("Wakeup", func(t *testing.T) {
		const maxWait = 5 * time.Second
		samples := scaled(200, 50)
		consumer := newClient(t, b.Addr(),
			kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().At(0)}}),
			kgo.FetchMaxWait(maxWait), kgo.FetchMinBytes(1))
		producer := newClient(t, b.Addr(), kgo.ProducerLinger(0), kgo.RequiredAcks(kgo.AllISRAcks()),
			kgo.DefaultProduceTopic(topic))

		type arrival struct {
			value string
			at    time.Time
		}
		arrivals := make(chan arrival, 16)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			for ctx.Err() == nil {
				fs := consumer.PollFetches(ctx)
				now := time.Now()
				fs.EachRecord(func(r *kgo.Record) { arrivals <- arrival{string(r.Value), now} })
			}
		}()

		toConsumer := make([]time.Duration, 0, samples)
		toAck := make([]time.Duration, 0, samples)
		for i := range samples {
			// Give the consumer's next fetch time to reach the broker and
			// park there; nothing observable says it has.
			time.Sleep(20 * time.Millisecond)
			sent := time.Now()
			if err := producer.ProduceSync(ctx, &kgo.Record{Value: []byte(strconv.Itoa(i))}).FirstErr(); err != nil {
				t.Fatalf("produce %d: %v", i, err)
			}
			acked := time.Since(sent)
			select {
			case a := <-arrivals:
				if a.value != strconv.Itoa(i) {
					t.Fatalf("sample %d: consumer got record %q", i, a.value)
				}
				d := a.at.Sub(sent)
				if d > maxWait/2 {
					t.Fatalf("sample %d: the record reached the consumer %v after it was produced; with max wait %v the append did not wake the fetch", i, d, maxWait)
				}
				toConsumer = append(toConsumer, d)
				toAck = append(toAck, acked)
			case <-time.After(maxWait + 5*time.Second):
				t.Fatalf("sample %d: the consumer never got the record", i)
			}
		}
		t.Logf("%d samples, fetch max wait %v: produce->consumer p50 %v p99 %v max %v; produce->ack (acks=all) p50 %v p99 %v",
			samples, maxWait, pct(toConsumer, 50), pct(toConsumer, 99), pct(toConsumer, 100), pct(toAck, 50), pct(toAck, 99))
	})
}

// pct returns the p-th percentile of ds (nearest rank).
func pct(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	i := (len(s)*p + 99) / 100
	return s[max(i-1, 0)].Round(10 * time.Microsecond)
}

// topicID looks a topic's id up (Fetch 13 and later name topics by id).
func topicID(t *testing.T, cl *kgo.Client, topic string) [16]byte {
	t.Helper()
	req := kmsg.NewPtrMetadataRequest()
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, mt)
	md, err := req.RequestWith(deadline(t, 20*time.Second), cl)
	if err != nil || len(md.Topics) != 1 {
		t.Fatalf("metadata for %s: %v", topic, err)
	}
	return md.Topics[0].TopicID
}
