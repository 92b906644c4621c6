package actors_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors"
	"github.com/samsa-io/samsa/netloop"
	"github.com/samsa-io/samsa/testkit"
	"github.com/samsa-io/samsa/wire"
)

// fetchValue is record i's value: 100 bytes derived from i.
func fetchValue(i int) []byte {
	v := make([]byte, 100)
	for j := range v {
		v[j] = byte(i*7 + j)
	}
	copy(v, strconv.Itoa(i))
	return v
}

// TestFetchRoundTripSendfile produces records with franz-go through a real
// netloop listener and consumes them from the start with franz-go
// (incremental fetch sessions, long polls), checking every record and
// that the record data left by sendfile.
func TestFetchRoundTripSendfile(t *testing.T) {
	for _, slots := range []string{"1000", "0"} {
		t.Run("sessions="+slots, func(t *testing.T) { testFetchRoundTrip(t, slots) })
	}
}

func testFetchRoundTrip(t *testing.T, slots string) {
	n := testkit.StartInProcess(t, "max.incremental.fetch.session.cache.slots", slots)
	adm, _ := n.Admin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const topic, partitions, total = "rt", 3, 30_000
	if _, err := adm.CreateTopic(ctx, partitions, 1, nil, topic); err != nil {
		t.Fatal(err)
	}

	prod, err := kgo.NewClient(kgo.SeedBrokers(n.Addr), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	for i := range total {
		prod.Produce(ctx, &kgo.Record{Topic: topic, Partition: int32(i % partitions), Key: []byte(strconv.Itoa(i)), Value: fetchValue(i)}, nil)
	}
	if err := prod.Flush(ctx); err != nil {
		t.Fatal(err)
	}

	before := n.Server.Stats()
	cons, err := kgo.NewClient(kgo.SeedBrokers(n.Addr), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxPartitionBytes(64<<10))
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	seen := make([]bool, total)
	next := make([]int64, partitions)
	got := 0
	for got < total {
		fs := cons.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed %d of %d: %v", got, total, err)
		}
		fs.EachError(func(topic string, p int32, err error) { t.Fatalf("fetch %s/%d: %v", topic, p, err) })
		fs.EachRecord(func(r *kgo.Record) {
			i, err := strconv.Atoi(string(r.Key))
			if err != nil || i < 0 || i >= total || seen[i] {
				t.Fatalf("bad or duplicate key %q", r.Key)
			}
			if r.Partition != int32(i%partitions) || !bytes.Equal(r.Value, fetchValue(i)) {
				t.Fatalf("record %d: partition %d, value differs", i, r.Partition)
			}
			if r.Offset != next[r.Partition] {
				t.Fatalf("partition %d: offset %d, want %d", r.Partition, r.Offset, next[r.Partition])
			}
			next[r.Partition]++
			seen[i] = true
			got++
		})
	}
	st := n.Server.Stats()
	sent, copied := st.BytesSendfile-before.BytesSendfile, st.BytesCopied-before.BytesCopied
	t.Logf("consumed %d records; sendfile %d bytes, copied %d bytes", got, sent, copied)
	if sent < total*100 {
		t.Fatalf("only %d bytes went by sendfile for %d bytes of values", sent, total*100)
	}
	if copied != 0 {
		t.Fatalf("%d record bytes were copied on a plaintext listener", copied)
	}
	// franz-go fetches through an incremental session when the broker
	// offers one, and falls back to full fetches when it does not.
	if got, want := n.Broker.FetchSessions(), map[string]int{"1000": 1, "0": 0}[slots]; got != want {
		t.Fatalf("%d fetch sessions, want %d", got, want)
	}
}

// fetchWatch is a node's handler that remembers the highest fetch offset
// of the Fetch requests the broker has handled. Once the broker's Handle
// has returned, a fetch that may wait is parked (at its partition's high
// watermark: in the partition's view) or its read is queued in the
// partition actor's mailbox, ahead of any produce sent later; either way
// the produce's append wakes it.
type fetchWatch struct {
	*actors.Broker // Handle is wrapped; Drain is the broker's
	mu             sync.Mutex
	offset         int64         // highest fetch offset handled; -1: none
	handled        chan struct{} // closed (and replaced) when offset grows
}

func newFetchWatch(b *actors.Broker) *fetchWatch {
	return &fetchWatch{Broker: b, offset: -1, handled: make(chan struct{})}
}

func (w *fetchWatch) Handle(req *wire.Request) {
	offset := int64(-1)
	if f, ok := req.Body.(*kmsg.FetchRequest); ok { // read before the broker owns it
		for _, t := range f.Topics {
			for _, p := range t.Partitions {
				offset = max(offset, p.FetchOffset)
			}
		}
	}
	w.Broker.Handle(req)
	if offset < 0 {
		return
	}
	w.mu.Lock()
	if offset > w.offset {
		w.offset = offset
		close(w.handled)
		w.handled = make(chan struct{})
	}
	w.mu.Unlock()
}

// waitFetchAt waits until the broker has handled a fetch from offset or
// later.
func (w *fetchWatch) waitFetchAt(ctx context.Context, offset int64) error {
	for {
		w.mu.Lock()
		done, handled := w.offset >= offset, w.handled
		w.mu.Unlock()
		if done {
			return nil
		}
		select {
		case <-handled:
		case <-ctx.Done():
			return fmt.Errorf("no fetch from offset %d: %w", offset, ctx.Err())
		}
	}
}

// TestFetchLongPollWakeup parks a consumer at the log end and measures how
// long after a produce is acknowledged the record arrives; the fetch's
// max wait is far longer, so every arrival is a wakeup by the append.
func TestFetchLongPollWakeup(t *testing.T) {
	var watch *fetchWatch
	n := testkit.StartInProcessWith(t, testkit.InProcessOptions{Handler: func(b *actors.Broker) netloop.Handler {
		watch = newFetchWatch(b)
		return watch
	}})
	adm, _ := n.Admin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const topic, rounds = "lp", 30
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
	prod, err := kgo.NewClient(kgo.SeedBrokers(n.Addr))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	cons, err := kgo.NewClient(kgo.SeedBrokers(n.Addr), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close() // after the node's stop below
	arrived := make(chan time.Time, rounds)
	go func() {
		for ctx.Err() == nil {
			fs := cons.PollFetches(ctx)
			now := time.Now()
			fs.EachRecord(func(*kgo.Record) { arrived <- now })
		}
	}()
	var lat, afterAck []time.Duration
	for i := range rounds {
		// Let the consumer park its fetch first: the one from the
		// offset this round's record gets.
		if err := watch.waitFetchAt(ctx, int64(i)); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if err := prod.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte(fmt.Sprint(i))}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		acked := time.Now()
		select {
		case at := <-arrived:
			lat = append(lat, at.Sub(start))
			afterAck = append(afterAck, at.Sub(acked))
		case <-ctx.Done():
			t.Fatalf("record %d never arrived", i)
		}
	}
	// The consumer is parked again with 30 s to wait: the node's stop (10 s
	// deadline) only succeeds because Drain answers it.
	if err := watch.waitFetchAt(ctx, rounds); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	n.Close()
	t.Logf("stopped with a parked fetch in %v", time.Since(stopped))
	slices.Sort(lat)
	slices.Sort(afterAck)
	t.Logf("produce-to-consume with a parked fetch (max wait 30s), %d rounds (acks=all, fsync included): p50 %v, p90 %v, max %v",
		rounds, lat[len(lat)/2], lat[len(lat)*9/10], lat[len(lat)-1])
	t.Logf("produce acknowledged to record consumed (negative: consumed first): p50 %v, p90 %v, max %v",
		afterAck[len(afterAck)/2], afterAck[len(afterAck)*9/10], afterAck[len(afterAck)-1])
}

// TestFetchRawErrors sends hand-made fetches for the cases clients rarely
// hit: unknown topic ids (v13), unknown partitions, offsets out of range,
// leader epochs, replica fetches and bad session epochs.
func TestFetchRawErrors(t *testing.T) {
	n := testkit.StartInProcess(t)
	adm, cl := n.Admin(t)
	ctx := ctxT(t)
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "raw"); err != nil {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "raw", Value: []byte("x")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	topics, err := adm.ListTopics(ctx, "raw")
	if err != nil {
		t.Fatal(err)
	}
	id := topics["raw"].ID

	fetch := func(version int16, mod func(r *kmsg.FetchRequest)) *kmsg.FetchResponse {
		t.Helper()
		r := kmsg.NewPtrFetchRequest()
		r.Version, r.ReplicaID, r.MaxBytes, r.SessionEpoch = version, -1, 1<<20, -1
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic, rt.TopicID = "raw", id
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.PartitionMaxBytes, rp.CurrentLeaderEpoch = 1<<20, -1
		rt.Partitions = append(rt.Partitions, rp)
		r.Topics = append(r.Topics, rt)
		mod(r)
		// At exactly this version, straight to the broker (a client would
		// negotiate the version and look the topic up first).
		return roundTrip(t, n.Addr, r).(*kmsg.FetchResponse)
	}
	code := func(r *kmsg.FetchResponse) error {
		if r.ErrorCode != 0 {
			return kerr.ErrorForCode(r.ErrorCode)
		}
		return kerr.ErrorForCode(r.Topics[0].Partitions[0].ErrorCode)
	}
	for _, c := range []struct {
		name    string
		version int16
		mod     func(r *kmsg.FetchRequest)
		want    error
	}{
		{"v4", 4, func(*kmsg.FetchRequest) {}, nil},
		{"v7", 7, func(*kmsg.FetchRequest) {}, nil},
		{"v11", 11, func(*kmsg.FetchRequest) {}, nil},
		{"v12", 12, func(*kmsg.FetchRequest) {}, nil},
		{"v13 by id", 13, func(*kmsg.FetchRequest) {}, nil},
		{"read_committed", 12, func(r *kmsg.FetchRequest) { r.IsolationLevel = 1 }, nil}, // LSO = hw: no transactions yet
		{"unknown id", 13, func(r *kmsg.FetchRequest) { r.Topics[0].TopicID = [16]byte{9} }, kerr.UnknownTopicID},
		{"unknown topic", 12, func(r *kmsg.FetchRequest) { r.Topics[0].Topic = "nope" }, kerr.UnknownTopicOrPartition},
		{"unknown partition", 12, func(r *kmsg.FetchRequest) { r.Topics[0].Partitions[0].Partition = 5 }, kerr.UnknownTopicOrPartition},
		{"past the end", 12, func(r *kmsg.FetchRequest) { r.Topics[0].Partitions[0].FetchOffset = 2 }, kerr.OffsetOutOfRange},
		{"old epoch", 12, func(r *kmsg.FetchRequest) { r.Topics[0].Partitions[0].CurrentLeaderEpoch = 1 << 30 }, kerr.UnknownLeaderEpoch},
		{"replica", 12, func(r *kmsg.FetchRequest) { r.ReplicaID = 1 }, kerr.InvalidRequest},
		{"unknown session", 12, func(r *kmsg.FetchRequest) { r.SessionID, r.SessionEpoch = 77, 3 }, kerr.FetchSessionIDNotFound},
	} {
		resp := fetch(c.version, c.mod)
		if err := code(resp); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
			continue
		}
		if c.want == nil {
			p := resp.Topics[0].Partitions[0]
			if p.HighWatermark != 1 || p.LastStableOffset != 1 || (c.version >= 5 && p.LogStartOffset != 0) || len(p.RecordBatches) == 0 {
				t.Errorf("%s: %+v", c.name, p)
			}
			if c.version >= 13 && resp.Topics[0].TopicID != id {
				t.Errorf("%s: topic id %x", c.name, resp.Topics[0].TopicID)
			}
			if c.version < 13 && resp.Topics[0].Topic != "raw" {
				t.Errorf("%s: topic %q", c.name, resp.Topics[0].Topic)
			}
		}
	}
}
