package datapath

import (
	"fmt"
	"io"
	"log"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// sarama's transactional producer in a consume-transform-produce loop:
// each chunk of input read with sarama's consumer is written, transformed,
// to the output in one transaction together with the group's offset
// (AddOffsetsToTxn, TxnOffsetCommit); every third chunk's first attempt
// is aborted and redone, as an application that failed mid-chunk would.
// A read_committed franz-go consumer must then find every input once in
// the output, and the group's committed offset must be the input's end:
// the aborted attempts' records and offsets were never applied.
func TestSaramaTransactionalCopy(t *testing.T) {
	b := sharedBroker(t)
	requireDataPath(t, b.Addr())
	sarama.Logger = log.New(io.Discard, "", 0)
	in, out := topicName(t, "in"), topicName(t, "out")
	createTopic(t, b.Addr(), in, 1, nil)
	createTopic(t, b.Addr(), out, 3, nil)
	group := in + "-group"
	const n, chunk = 3000, 100
	ctx := deadline(t, 2*time.Minute)
	p := newClient(t, b.Addr(), kgo.DefaultProduceTopic(in))
	for i := range n {
		p.Produce(ctx, kgo.StringRecord(fmt.Sprint(i)), nil)
	}
	if err := p.Flush(ctx); err != nil {
		t.Fatal(err)
	}

	cfg := saramaConfig(sarama.CompressionNone)
	cfg.Producer.Partitioner = sarama.NewRoundRobinPartitioner
	cfg.Producer.Idempotent = true
	cfg.Producer.Transaction.ID = out + "-id"
	cfg.Net.MaxOpenRequests = 1
	prod, err := sarama.NewSyncProducer([]string{b.Addr()}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	cons, err := sarama.NewConsumer([]string{b.Addr()}, saramaConfig(sarama.CompressionNone))
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	pc, err := cons.ConsumePartition(in, 0, sarama.OffsetOldest)
	if err != nil {
		t.Fatal(err)
	}
	defer pc.AsyncClose()

	aborted := 0
	for c := 0; c < n/chunk; c++ {
		var msgs []*sarama.ConsumerMessage
		for len(msgs) < chunk {
			select {
			case m := <-pc.Messages():
				msgs = append(msgs, m)
			case err := <-pc.Errors():
				t.Fatalf("consuming the input: %v", err)
			case <-ctx.Done():
				t.Fatalf("chunk %d: %d of %d input records", c, len(msgs), chunk)
			}
		}
		for attempt := 0; ; attempt++ {
			abort := c%3 == 1 && attempt == 0
			if err := prod.BeginTxn(); err != nil {
				t.Fatalf("chunk %d: BeginTxn: %v", c, err)
			}
			var batch []*sarama.ProducerMessage
			for _, m := range msgs {
				batch = append(batch, &sarama.ProducerMessage{Topic: out, Value: sarama.StringEncoder(string(m.Value) + "|copied")})
			}
			if err := prod.SendMessages(batch); err != nil {
				t.Fatalf("chunk %d: SendMessages: %v", c, err)
			}
			next := msgs[len(msgs)-1].Offset + 1
			offsets := map[string][]*sarama.PartitionOffsetMetadata{in: {{Partition: 0, Offset: next}}}
			if err := prod.AddOffsetsToTxn(offsets, group); err != nil {
				t.Fatalf("chunk %d: AddOffsetsToTxn: %v", c, err)
			}
			if abort {
				if err := prod.AbortTxn(); err != nil {
					t.Fatalf("chunk %d: AbortTxn: %v", c, err)
				}
				aborted++
				continue
			}
			if err := prod.CommitTxn(); err != nil {
				t.Fatalf("chunk %d: CommitTxn: %v", c, err)
			}
			break
		}
	}

	rc := newClient(t, b.Addr(), kgo.ConsumeTopics(out), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	got := map[string]int{}
	read := 0
	for read < n {
		fs := rc.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read_committed: %d of %d output records", read, n)
		}
		fs.EachRecord(func(r *kgo.Record) { got[string(r.Value)]++; read++ })
	}
	for i := range n {
		if v := fmt.Sprintf("%d|copied", i); got[v] != 1 {
			t.Errorf("input %d is in the output %d times", i, got[v])
		}
	}
	if read != n {
		t.Errorf("read_committed: %d output records for %d inputs (%d chunks aborted once)", read, n, aborted)
	}
	offs, err := kadm.NewClient(newClient(t, b.Addr())).FetchOffsets(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := offs.Lookup(in, 0); !ok || o.At != n {
		t.Errorf("the group's committed offset: %+v (found %v), want %d", o, ok, n)
	}
}
