package actors

import (
	"context"
	"encoding/binary"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/config"
	"github.com/samsa-io/samsa/actors/partition"
	"github.com/samsa-io/samsa/segment"
	"github.com/samsa-io/samsa/segment/vfs"
	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/batchtest"
	"github.com/samsa-io/samsa/wire/kerr"
)

// startBroker starts a broker on dir without a network listener (tests
// call Handle directly) and closes it when the test ends, unless the test
// closed it (a second Close only returns ErrClosed). opts are the
// unexported seams (Options.openDir, ...) that internal tests inject.
//
// Why this is not testkit.StartInProcess, the one in-process broker:
// testkit imports actors, so package actors' own tests cannot import it
// (an import cycle), and the seams and helpers these tests use are
// unexported, so they cannot move to package actors_test. A test that
// needs neither belongs in package actors_test, on testkit.StartInProcess.
func startBroker(t testing.TB, dir string, opts ...Options) *Broker {
	t.Helper()
	cfg, err := config.Load(config.Input{Origin: "test", Values: map[string]string{"log.dirs": dir}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewBroker(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// t.Context is already cancelled when cleanups run.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		b.Close(ctx)
	})
	return b
}

func createTopicWith(t testing.TB, b *Broker, name string, partitions int32, kv ...string) {
	t.Helper()
	req := kmsg.NewPtrCreateTopicsRequest()
	req.Version = 7
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, partitions, 1
	for i := 0; i+1 < len(kv); i += 2 {
		c := kmsg.NewCreateTopicsRequestTopicConfig()
		c.Name, c.Value = kv[i], &kv[i+1]
		rt.Configs = append(rt.Configs, c)
	}
	req.Topics = append(req.Topics, rt)
	done := make(chan *wire.Response, 1)
	b.Handle(&wire.Request{Header: wire.RequestHeader{APIKey: req.Key(), APIVersion: req.Version, CorrelationID: 1},
		Body: req, Reply: func(r *wire.Response) { done <- r }})
	raw, err := (<-done).AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	resp := req.ResponseKind().(*kmsg.CreateTopicsResponse)
	if err := resp.ReadFrom(raw[9:]); err != nil { // size, correlation id, header tags
		t.Fatal(err)
	}
	if resp.Topics[0].ErrorCode != 0 {
		t.Fatalf("create %s: %d", name, resp.Topics[0].ErrorCode)
	}
}

func produceRequest9(acks int16, topic string, partition int32, records []byte) *kmsg.ProduceRequest {
	req := kmsg.NewPtrProduceRequest()
	req.Version, req.Acks, req.TimeoutMillis = 9, acks, 10000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition, rp.Records = partition, records
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

// produce sends one batch and returns the partition's answer.
func produce(t *testing.T, b *Broker, acks int16, topic string, partition int32, records []byte) kmsg.ProduceResponseTopicPartition {
	t.Helper()
	resp := call(t, b, produceRequest9(acks, topic, partition, records)).(*kmsg.ProduceResponse)
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("produce answer shape: %+v", resp)
	}
	return resp.Topics[0].Partitions[0]
}

// mustProduce produces and fails unless the batch landed at base.
func mustProduce(t *testing.T, b *Broker, topic string, partition int32, records []byte, base int64) kmsg.ProduceResponseTopicPartition {
	t.Helper()
	p := produce(t, b, -1, topic, partition, records)
	if p.ErrorCode != 0 || p.BaseOffset != base {
		t.Fatalf("produce to %s-%d: code %d (%v), base %d, want base %d", topic, partition, p.ErrorCode, msgOf(p.ErrorMessage), p.BaseOffset, base)
	}
	return p
}

func msgOf(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// listOffset asks ListOffsets v9 for one partition.
func listOffset(t *testing.T, b *Broker, topic string, partition int32, ts int64) kmsg.ListOffsetsResponseTopicPartition {
	t.Helper()
	req := kmsg.NewPtrListOffsetsRequest()
	req.Version, req.ReplicaID = 9, -1
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Partition, rp.Timestamp = partition, ts
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return call(t, b, req).(*kmsg.ListOffsetsResponse).Topics[0].Partitions[0]
}

func TestProduceAcksAndListOffsets(t *testing.T) {
	b := startBroker(t, t.TempDir())
	createTopicWith(t, b, "t", 2)

	now := time.Now().UnixMilli()
	p := produce(t, b, 1, "t", 0, batchtest.Plain(3, now-3000))
	if p.ErrorCode != 0 || p.BaseOffset != 0 || p.LogAppendTime != -1 || p.LogStartOffset != 0 {
		t.Fatalf("acks=1: %+v", p)
	}
	mustProduce(t, b, "t", 0, batchtest.Plain(2, now-2000), 3) // acks=all

	// acks=0: no response at all, but the batch is appended (the reply
	// only comes once the frame is no longer needed).
	done := make(chan *wire.Response, 1)
	req := produceRequest9(0, "t", 0, batchtest.Plain(4, now-1000))
	b.Handle(&wire.Request{Header: wire.RequestHeader{APIKey: req.Key(), APIVersion: req.Version, CorrelationID: 7},
		Body: req, Reply: func(r *wire.Response) { done <- r }})
	if r := <-done; r != nil {
		t.Fatalf("acks=0 got a response of %d bytes", r.Len())
	}
	mustProduce(t, b, "t", 0, batchtest.Plain(1, now), 9)

	// The other partition is separate.
	mustProduce(t, b, "t", 1, batchtest.Plain(2, now), 0)

	checks := []struct {
		name      string
		ts        int64
		offset    int64
		timestamp int64
	}{
		{"latest", -1, 10, -1},
		{"earliest", -2, 0, -1},
		{"earliest local", -4, 0, -1},
		{"latest tiered (none)", -5, -1, -1},
		{"max timestamp", -3, 9, now},
		{"by timestamp, first batch", now - 3000, 0, now - 3000},
		{"by timestamp, between batches", now - 2500, 3, now - 2000},
		{"by timestamp, acks=0 batch", now - 1000, 5, now - 1000},
		{"by timestamp, after everything", now + 1, -1, -1},
	}
	for _, c := range checks {
		got := listOffset(t, b, "t", 0, c.ts)
		if got.ErrorCode != 0 || got.Offset != c.offset || got.Timestamp != c.timestamp {
			t.Errorf("%s: code %d offset %d timestamp %d, want offset %d timestamp %d", c.name, got.ErrorCode, got.Offset, got.Timestamp, c.offset, c.timestamp)
		}
		if c.offset >= 0 && got.LeaderEpoch != 0 {
			t.Errorf("%s: leader epoch %d, want 0", c.name, got.LeaderEpoch)
		}
	}
	if got := listOffset(t, b, "t", 1, -1); got.Offset != 2 {
		t.Errorf("partition 1 latest: %d, want 2", got.Offset)
	}
	if got := listOffset(t, b, "nope", 0, -1); got.ErrorCode != int16(kerr.UnknownTopicOrPartition) {
		t.Errorf("unknown topic: code %d", got.ErrorCode)
	}
	if got := listOffset(t, b, "t", 2, -1); got.ErrorCode != int16(kerr.UnknownTopicOrPartition) {
		t.Errorf("unknown partition: code %d", got.ErrorCode)
	}

	// A stale or future leader epoch from the client is refused.
	req2 := kmsg.NewPtrListOffsetsRequest()
	req2.Version, req2.ReplicaID = 4, -1
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = "t"
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Timestamp, rp.CurrentLeaderEpoch = -1, 3
	rt.Partitions = append(rt.Partitions, rp)
	req2.Topics = append(req2.Topics, rt)
	if got := call(t, b, req2).(*kmsg.ListOffsetsResponse).Topics[0].Partitions[0]; got.ErrorCode != int16(kerr.UnknownLeaderEpoch) {
		t.Errorf("current leader epoch 3 against 0: code %d, want UNKNOWN_LEADER_EPOCH", got.ErrorCode)
	}
}

func TestProduceErrors(t *testing.T) {
	b := startBroker(t, t.TempDir())
	createTopicWith(t, b, "t", 1)
	createTopicWith(t, b, "isr2", 1, "min.insync.replicas", "2")
	createTopicWith(t, b, "small", 1, "max.message.bytes", "100")
	now := time.Now().UnixMilli()

	check := func(name string, p kmsg.ProduceResponseTopicPartition, want kerr.Code) {
		t.Helper()
		if p.ErrorCode != int16(want) {
			t.Errorf("%s: code %d (%s), want %v", name, p.ErrorCode, msgOf(p.ErrorMessage), want)
		}
		if want != kerr.None && p.BaseOffset != -1 {
			t.Errorf("%s: base offset %d on an error", name, p.BaseOffset)
		}
	}
	check("unknown topic", produce(t, b, 1, "nope", 0, batchtest.Plain(1, now)), kerr.UnknownTopicOrPartition)
	check("unknown partition", produce(t, b, 1, "t", 5, batchtest.Plain(1, now)), kerr.UnknownTopicOrPartition)
	check("acks=2", produce(t, b, 2, "t", 0, batchtest.Plain(1, now)), kerr.InvalidRequiredAcks)
	check("acks=all below min.insync.replicas", produce(t, b, -1, "isr2", 0, batchtest.Plain(1, now)), kerr.NotEnoughReplicas)
	check("acks=1 ignores min.insync.replicas", produce(t, b, 1, "isr2", 0, batchtest.Plain(1, now)), kerr.None)
	check("over max.message.bytes", produce(t, b, 1, "small", 0, batchtest.Plain(5, now)), kerr.MessageTooLarge)
	corrupt := batchtest.Plain(2, now)
	corrupt[len(corrupt)-1] ^= 1
	check("bad CRC (found by the append)", produce(t, b, 1, "t", 0, corrupt), kerr.CorruptMessage)
	magic1 := batchtest.Plain(2, now)
	magic1[wire.BatchMagicPos] = 1
	check("magic 1", produce(t, b, 1, "t", 0, magic1), kerr.UnsupportedForMessageFormat)
	check("timestamp two hours ahead", produce(t, b, 1, "t", 0, batchtest.Plain(1, now+2*3600_000)), kerr.InvalidTimestamp)
	// A transactional batch is refused only with transactions off
	// (e2e/datapath TestTransactionsOff); on, its checks are the
	// transaction tests'.

	// Nothing rejected was appended.
	if got := listOffset(t, b, "t", 0, -1); got.Offset != 0 {
		t.Fatalf("log end after rejected produces: %d", got.Offset)
	}
	// Several partitions in one request: each gets its own answer.
	req := produceRequest9(1, "t", 0, batchtest.Plain(1, now))
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition, rp.Records = 9, batchtest.Plain(1, now)
	req.Topics[0].Partitions = append(req.Topics[0].Partitions, rp)
	resp := call(t, b, req).(*kmsg.ProduceResponse)
	if ps := resp.Topics[0].Partitions; ps[0].ErrorCode != 0 || ps[0].BaseOffset != 0 || ps[1].ErrorCode != int16(kerr.UnknownTopicOrPartition) {
		t.Fatalf("mixed request: %+v", ps)
	}
}

func TestProduceLogAppendTime(t *testing.T) {
	dir := t.TempDir()
	b := startBroker(t, dir)
	createTopicWith(t, b, "lat", 1, "message.timestamp.type", "LogAppendTime")
	before := time.Now().UnixMilli()
	p := mustProduce(t, b, "lat", 0, batchtest.Plain(3, 1000), 0) // an ancient CreateTime is fine here
	after := time.Now().UnixMilli()
	if p.LogAppendTime < before || p.LogAppendTime > after {
		t.Fatalf("log append time %d not in [%d, %d]", p.LogAppendTime, before, after)
	}
	data, err := os.ReadFile(filepath.Join(dir, "lat-0", "00000000000000000000.log"))
	if err != nil {
		t.Fatal(err)
	}
	h, err := wire.ValidateBatch(data) // one batch; CRC recomputed by the append
	if err != nil {
		t.Fatal(err)
	}
	if h.Attributes&wire.AttrTimestampLogTime == 0 || h.MaxTimestamp != p.LogAppendTime {
		t.Fatalf("stored batch: attributes %x max timestamp %d, want LogAppendTime %d", h.Attributes, h.MaxTimestamp, p.LogAppendTime)
	}
	// Every record shares the time: the first offset is the answer.
	if got := listOffset(t, b, "lat", 0, -3); got.Offset != 0 || got.Timestamp != p.LogAppendTime {
		t.Fatalf("max timestamp: %+v", got)
	}
}

func TestIdempotentProduceAcrossRestarts(t *testing.T) {
	dir := t.TempDir()
	b := startBroker(t, dir)
	createTopicWith(t, b, "idem", 1)
	now := time.Now().UnixMilli()
	const pid = 4000

	mustProduce(t, b, "idem", 0, batchtest.Plain(3, now, batchtest.Producer(pid, 0, 0)), 0)  // seq 0-2, offsets 0-2
	mustProduce(t, b, "idem", 0, batchtest.Plain(2, now, batchtest.Producer(pid, 0, 3)), 3)  // seq 3-4, offsets 3-4
	mustProduce(t, b, "idem", 0, batchtest.Plain(5, now), 5)                                 // someone else, offsets 5-9
	mustProduce(t, b, "idem", 0, batchtest.Plain(1, now, batchtest.Producer(pid, 0, 5)), 10) // seq 5

	// A retry of an earlier batch answers its original offset and appends nothing.
	mustProduce(t, b, "idem", 0, batchtest.Plain(2, now, batchtest.Producer(pid, 0, 3)), 3)
	if got := listOffset(t, b, "idem", 0, -1); got.Offset != 11 {
		t.Fatalf("log end after a duplicate: %d, want 11", got.Offset)
	}
	if p := produce(t, b, 1, "idem", 0, batchtest.Plain(1, now, batchtest.Producer(pid, 0, 9))); p.ErrorCode != int16(kerr.OutOfOrderSequenceNumber) {
		t.Fatalf("gap: code %d", p.ErrorCode)
	}
	mustProduce(t, b, "idem", 0, batchtest.Plain(1, now, batchtest.Producer(pid, 1, 0)), 11) // new epoch, sequence 0
	if p := produce(t, b, 1, "idem", 0, batchtest.Plain(1, now, batchtest.Producer(pid, 0, 6))); p.ErrorCode != int16(kerr.InvalidProducerEpoch) {
		t.Fatalf("old epoch: code %d", p.ErrorCode)
	}

	// Clean restart: state comes from the snapshot written at close.
	if err := b.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	snaps := partition.Snapshots(vfs.OS, filepath.Join(dir, "idem-0"))
	if len(snaps) == 0 || snaps[0] != 12 {
		t.Fatalf("snapshots after close: %v, want one at 12", snaps)
	}
	b = startBroker(t, dir)
	mustProduce(t, b, "idem", 0, batchtest.Plain(1, now, batchtest.Producer(pid, 1, 0)), 11) // duplicate of the last batch
	mustProduce(t, b, "idem", 0, batchtest.Plain(2, now, batchtest.Producer(pid, 1, 1)), 12) // the producer continues
	if p := produce(t, b, 1, "idem", 0, batchtest.Plain(1, now, batchtest.Producer(pid, 1, 7))); p.ErrorCode != int16(kerr.OutOfOrderSequenceNumber) {
		t.Fatalf("gap after restart: code %d", p.ErrorCode)
	}

	// Without snapshots the state is rebuilt from the log alone.
	if err := b.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, off := range partition.Snapshots(vfs.OS, filepath.Join(dir, "idem-0")) {
		if err := os.Remove(partition.SnapshotPath(filepath.Join(dir, "idem-0"), off)); err != nil {
			t.Fatal(err)
		}
	}
	b = startBroker(t, dir)
	mustProduce(t, b, "idem", 0, batchtest.Plain(2, now, batchtest.Producer(pid, 1, 1)), 12) // duplicate found by replay
	mustProduce(t, b, "idem", 0, batchtest.Plain(1, now, batchtest.Producer(pid, 1, 3)), 14)
	if p := produce(t, b, 1, "idem", 0, batchtest.Plain(1, now, batchtest.Producer(pid, 0, 99))); p.ErrorCode != int16(kerr.InvalidProducerEpoch) {
		t.Fatalf("old epoch after replay: code %d", p.ErrorCode)
	}

	// A snapshot from beyond the log end (written before a crash cut the
	// log) is ignored and removed.
	if err := b.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	bogus := partition.SnapshotPath(filepath.Join(dir, "idem-0"), 1000)
	if err := os.WriteFile(bogus, []byte("not a snapshot"), 0o644); err != nil {
		t.Fatal(err)
	}
	b = startBroker(t, dir)
	mustProduce(t, b, "idem", 0, batchtest.Plain(1, now, batchtest.Producer(pid, 1, 4)), 15)
	if _, err := os.Stat(bogus); !os.IsNotExist(err) {
		t.Fatalf("snapshot beyond the log end kept: %v", err)
	}
}

func TestInitProducerIDUniqueAcrossRestarts(t *testing.T) {
	dir := t.TempDir()
	initPID := func(b *Broker, txn *string) *kmsg.InitProducerIDResponse {
		req := kmsg.NewPtrInitProducerIDRequest()
		req.Version, req.TransactionalID, req.ProducerID, req.ProducerEpoch = 4, txn, -1, -1
		req.TransactionTimeoutMillis = 60000
		return call(t, b, req).(*kmsg.InitProducerIDResponse)
	}
	seen := map[int64]bool{}
	last, txnPID := int64(-1), int64(-1)
	for round := range 3 {
		b := startBroker(t, dir)
		for range 5 {
			r := initPID(b, nil)
			if r.ErrorCode != 0 || r.ProducerEpoch != 0 || r.ProducerID < 0 {
				t.Fatalf("round %d: %+v", round, r)
			}
			if seen[r.ProducerID] || r.ProducerID <= last {
				t.Fatalf("round %d: id %d reused or not increasing (last %d)", round, r.ProducerID, last)
			}
			seen[r.ProducerID], last = true, r.ProducerID
		}
		// A transactional id keeps its producer id across restarts (its
		// __transaction_state record), one epoch higher each time, and
		// that id is none of the idempotent producers'.
		txn := "tx"
		find := kmsg.NewPtrFindCoordinatorRequest() // as clients do: it makes and loads the coordinators
		find.Version, find.CoordinatorType, find.CoordinatorKeys = 4, 1, []string{txn}
		if c := call(t, b, find).(*kmsg.FindCoordinatorResponse).Coordinators[0]; c.ErrorCode != 0 {
			t.Fatalf("round %d: FindCoordinator for a transactional id: %+v", round, c)
		}
		// Retried as a client would, for as long as the coordinator
		// loads: a count of tight retries ran out on a loaded machine.
		r := initPID(b, &txn)
		for deadline := time.Now().Add(30 * time.Second); retriableInit(r.ErrorCode) && time.Now().Before(deadline); {
			<-time.After(10 * time.Millisecond)
			r = initPID(b, &txn)
		}
		if r.ErrorCode != 0 || int(r.ProducerEpoch) != round || (round > 0 && r.ProducerID != txnPID) {
			t.Fatalf("round %d: transactional: %+v, want producer %d at epoch %d", round, r, txnPID, round)
		}
		if round == 0 {
			if seen[r.ProducerID] {
				t.Fatalf("the transactional id got idempotent producer %d's id", r.ProducerID)
			}
			txnPID = r.ProducerID
		}
		if err := b.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, "samsa-producer-ids"))
	if err != nil || string(data) != "samsa-producer-ids 1 3000\n" {
		t.Fatalf("producer id file: %q, %v", data, err)
	}
}

// retriableInit: the answers a transactional InitProducerId gets while
// the broker's first transaction coordinator loads.
func retriableInit(code int16) bool {
	switch kerr.Code(code) {
	case kerr.CoordinatorLoadInProgress, kerr.CoordinatorNotAvailable, kerr.NotCoordinator, kerr.ConcurrentTransactions:
		return true
	}
	return false
}

// Inside compressed batches ListOffsets names the exact record, as Kafka
// does: the first at or after the timestamp, also when the log start cuts
// the batch, and the first holding the maximum timestamp.
func TestListOffsetsInsideCompressedBatches(t *testing.T) {
	b := startBroker(t, t.TempDir())
	createTopicWith(t, b, "z", 1)
	now := time.Now().UnixMilli()
	snappy := func(timestamps ...int64) []byte {
		var recs []batchtest.Record
		for _, ts := range timestamps {
			recs = append(recs, batchtest.Record{Value: []byte("value"), Timestamp: ts})
		}
		return batchtest.Build(recs, batchtest.Compression(wire.CodecSnappy, wire.Compress))
	}
	mustProduce(t, b, "z", 0, snappy(now-50, now-40, now-30, now-20, now-10), 0) // offsets 0-4
	mustProduce(t, b, "z", 0, snappy(now-5, now, now-1, now), 5)                 // offsets 5-8: the max twice

	check := func(name string, ts, offset, timestamp int64) {
		t.Helper()
		if got := listOffset(t, b, "z", 0, ts); got.ErrorCode != 0 || got.Offset != offset || got.Timestamp != timestamp {
			t.Errorf("%s: offset %d timestamp %d, want %d %d", name, got.Offset, got.Timestamp, offset, timestamp)
		}
	}
	check("first record", now-60, 0, now-50)
	check("inside the first batch", now-35, 2, now-30)
	check("exact timestamp", now-20, 3, now-20)
	check("inside the second batch", now-3, 6, now)
	check("max timestamp: its first record", -3, 6, now)

	req := kmsg.NewPtrDeleteRecordsRequest()
	req.Version = 2
	rt := kmsg.NewDeleteRecordsRequestTopic()
	rt.Topic = "z"
	rp := kmsg.NewDeleteRecordsRequestTopicPartition()
	rp.Offset = 3
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	if r := call(t, b, req).(*kmsg.DeleteRecordsResponse).Topics[0].Partitions[0]; r.ErrorCode != 0 || r.LowWatermark != 3 {
		t.Fatalf("delete records: %+v", r)
	}
	check("timestamp in the deleted range", now-60, 3, now-20)
}

func TestDeleteRecords(t *testing.T) {
	b := startBroker(t, t.TempDir())
	createTopicWith(t, b, "d", 1)
	now := time.Now().UnixMilli()
	for i := range 4 {
		mustProduce(t, b, "d", 0, batchtest.Plain(3, now), int64(3*i))
	}
	del := func(offset int64) kmsg.DeleteRecordsResponseTopicPartition {
		req := kmsg.NewPtrDeleteRecordsRequest()
		req.Version, req.TimeoutMillis = 2, 1000
		rt := kmsg.NewDeleteRecordsRequestTopic()
		rt.Topic = "d"
		rp := kmsg.NewDeleteRecordsRequestTopicPartition()
		rp.Offset = offset
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		return call(t, b, req).(*kmsg.DeleteRecordsResponse).Topics[0].Partitions[0]
	}
	if r := del(4); r.ErrorCode != 0 || r.LowWatermark != 4 {
		t.Fatalf("delete before 4: %+v", r)
	}
	if got := listOffset(t, b, "d", 0, -2); got.Offset != 4 {
		t.Fatalf("earliest after delete: %d", got.Offset)
	}
	if r := del(2); r.ErrorCode != 0 || r.LowWatermark != 4 {
		t.Fatalf("delete below the start: %+v", r)
	}
	if r := del(13); r.ErrorCode != int16(kerr.OffsetOutOfRange) {
		t.Fatalf("delete beyond the high watermark: %+v", r)
	}
	if r := del(-1); r.ErrorCode != 0 || r.LowWatermark != 12 {
		t.Fatalf("delete to the high watermark: %+v", r)
	}
	if got := listOffset(t, b, "d", 0, -2); got.Offset != 12 {
		t.Fatalf("earliest after deleting all: %d", got.Offset)
	}
	mustProduce(t, b, "d", 0, batchtest.Plain(1, now), 12)
	// The new log start survives a restart.
	dir := b.cfg.LogDirs[0]
	if err := b.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	b = startBroker(t, dir)
	if got := listOffset(t, b, "d", 0, -2); got.Offset != 12 {
		t.Fatalf("earliest after restart: %d", got.Offset)
	}
}

func TestOffsetForLeaderEpoch(t *testing.T) {
	b := startBroker(t, t.TempDir())
	createTopicWith(t, b, "e", 1)
	mustProduce(t, b, "e", 0, batchtest.Plain(5, time.Now().UnixMilli()), 0)
	ask := func(current, epoch int32) kmsg.OffsetForLeaderEpochResponseTopicPartition {
		req := kmsg.NewPtrOffsetForLeaderEpochRequest()
		req.Version, req.ReplicaID = 4, -1
		rt := kmsg.NewOffsetForLeaderEpochRequestTopic()
		rt.Topic = "e"
		rp := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
		rp.CurrentLeaderEpoch, rp.LeaderEpoch = current, epoch
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		return call(t, b, req).(*kmsg.OffsetForLeaderEpochResponse).Topics[0].Partitions[0]
	}
	if r := ask(0, 0); r.ErrorCode != 0 || r.LeaderEpoch != 0 || r.EndOffset != 5 {
		t.Fatalf("epoch 0: %+v", r)
	}
	// An epoch above every epoch of the log is unknown (Kafka: -1/-1).
	if r := ask(-1, 3); r.ErrorCode != 0 || r.LeaderEpoch != -1 || r.EndOffset != -1 {
		t.Fatalf("epoch 3 (latest is 0): %+v", r)
	}
	if r := ask(2, 0); r.ErrorCode != int16(kerr.UnknownLeaderEpoch) {
		t.Fatalf("client ahead of the leader: %+v", r)
	}
	// The batches carry the leader epoch.
	data, err := os.ReadFile(filepath.Join(b.cfg.LogDirs[0], "e-0", "00000000000000000000.log"))
	if err != nil {
		t.Fatal(err)
	}
	if epoch := int32(binary.BigEndian.Uint32(data[wire.BatchLeaderEpochPos:])); epoch != 0 {
		t.Fatalf("stored batch leader epoch %d, want 0", epoch)
	}
}

// A failed fsync is never acknowledged: the produce waiting for it gets
// KAFKA_STORAGE_ERROR, later produces too (the log refuses appends), and
// the high watermark stays where durable data ends.
func TestProduceFsyncFailure(t *testing.T) {
	mem := vfs.NewMemFS()
	b := startBroker(t, t.TempDir(), Options{openDir: func(path string, opts segment.Options) (partition.LogDir, error) {
		opts.FS = mem
		return segment.OpenDir(path, opts)
	}})
	createTopicWith(t, b, "f", 1)
	now := time.Now().UnixMilli()
	mustProduce(t, b, "f", 0, batchtest.Plain(2, now), 0)

	mem.SetFault(func(op vfs.Op, name string, size int) (int, error) {
		if op == vfs.OpSync && strings.HasSuffix(name, ".log") {
			return 0, vfs.ErrInjected
		}
		return 0, nil
	})
	for i := range 2 {
		if p := produce(t, b, -1, "f", 0, batchtest.Plain(1, now)); p.ErrorCode != int16(kerr.KafkaStorageError) || p.BaseOffset != -1 {
			t.Fatalf("produce %d after a failed fsync: code %d base %d", i, p.ErrorCode, p.BaseOffset)
		}
	}
	if got := listOffset(t, b, "f", 0, -1); got.Offset != 2 {
		t.Fatalf("high watermark after a failed fsync: %d, want 2", got.Offset)
	}
}

// Altered topic configs reach produce validation live.
func TestProduceRulesFollowAlteredConfigs(t *testing.T) {
	b := startBroker(t, t.TempDir())
	createTopicWith(t, b, "alt", 1)
	now := time.Now().UnixMilli()
	mustProduce(t, b, "alt", 0, batchtest.Plain(1, now), 0)

	alter := func(name, value string) {
		req := kmsg.NewPtrIncrementalAlterConfigsRequest()
		req.Version = 1
		r := kmsg.NewIncrementalAlterConfigsRequestResource()
		r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeTopic, "alt"
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Value, c.Op = name, &value, kmsg.IncrementalAlterConfigOpSet
		r.Configs = append(r.Configs, c)
		req.Resources = append(req.Resources, r)
		if resp := call(t, b, req).(*kmsg.IncrementalAlterConfigsResponse); resp.Resources[0].ErrorCode != 0 {
			t.Fatalf("alter %s: %d", name, resp.Resources[0].ErrorCode)
		}
	}
	alter("min.insync.replicas", "2")
	if p := produce(t, b, -1, "alt", 0, batchtest.Plain(1, now)); p.ErrorCode != int16(kerr.NotEnoughReplicas) {
		t.Fatalf("acks=all after min.insync.replicas=2: code %d", p.ErrorCode)
	}
	alter("message.timestamp.type", "LogAppendTime")
	p := produce(t, b, 1, "alt", 0, batchtest.Plain(1, 5))
	if p.ErrorCode != 0 || p.LogAppendTime < now {
		t.Fatalf("after LogAppendTime: %+v", p)
	}
}

// Clients cannot write to Kafka's internal topics; their coordinators
// write them. Kafka answers INVALID_TOPIC_EXCEPTION.
func TestProduceToInternalTopicRefused(t *testing.T) {
	b := startBroker(t, t.TempDir())
	createTopicWith(t, b, "__consumer_offsets", 1)
	p := produce(t, b, -1, "__consumer_offsets", 0, batchtest.Plain(1, time.Now().UnixMilli()))
	if p.ErrorCode != int16(kerr.InvalidTopicException) {
		t.Fatalf("produce to __consumer_offsets: code %d (%s), want INVALID_TOPIC_EXCEPTION", p.ErrorCode, msgOf(p.ErrorMessage))
	}
	if end := listOffset(t, b, "__consumer_offsets", 0, -1).Offset; end != 0 {
		t.Fatalf("the refused batch was appended: log end %d", end)
	}
}

// acks=0 gets no response; a produce of it that fails asks netloop to
// close the connection (Kafka's way of telling such a client), one that
// succeeds does not.
func TestAcksZeroFailureClosesConnection(t *testing.T) {
	b := startBroker(t, t.TempDir())
	createTopic(t, b, "z", 1)
	send := func(req *kmsg.ProduceRequest) *wire.Response {
		t.Helper()
		done := make(chan *wire.Response, 1)
		b.Handle(&wire.Request{Header: wire.RequestHeader{APIKey: req.Key(), APIVersion: req.Version, CorrelationID: 7},
			Body: req, Reply: func(r *wire.Response) { done <- r }})
		select {
		case r := <-done:
			return r
		case <-time.After(10 * time.Second):
			t.Fatal("no reply")
			return nil
		}
	}
	if r := send(produceRequest9(0, "z", 0, batchtest.Plain(3, 1000))); r != nil {
		t.Fatalf("a successful acks=0 produce got a response: %+v", r)
	}
	for name, req := range map[string]*kmsg.ProduceRequest{
		"unknown topic":     produceRequest9(0, "nope", 0, batchtest.Plain(1, 1000)),
		"unknown partition": produceRequest9(0, "z", 5, batchtest.Plain(1, 1000)),
		"corrupt batch":     produceRequest9(0, "z", 0, []byte("not a record batch, not at all, no")),
	} {
		r := send(req)
		if r == nil || !r.CloseAfter || len(r.Chunks) != 0 {
			t.Fatalf("%s with acks=0: reply %+v, want no bytes and CloseAfter", name, r)
		}
	}
}

// An acks=all produce hands its frame back for reuse as soon as the
// partition has appended the records, not when the answer goes out:
// that waits for the fsync (and, in a cluster, for the ISR), and frames
// held all that time were most of a loaded broker's live memory.
func TestProduceFrameReusedBeforeTheAnswer(t *testing.T) {
	mem := vfs.NewMemFS()
	b := startBroker(t, t.TempDir(), Options{openDir: func(path string, opts segment.Options) (partition.LogDir, error) {
		opts.FS = mem
		return segment.OpenDir(path, opts)
	}})
	createTopicWith(t, b, "f", 1)
	hold := make(chan struct{})
	mem.SetFault(func(op vfs.Op, name string, size int) (int, error) {
		if op == vfs.OpSync && strings.HasSuffix(name, ".log") {
			<-hold
		}
		return 0, nil
	})
	released, answered := make(chan struct{}), make(chan *wire.Response, 1)
	req := produceRequest9(-1, "f", 0, batchtest.Plain(2, time.Now().UnixMilli()))
	b.Handle(&wire.Request{Header: wire.RequestHeader{APIKey: req.Key(), APIVersion: req.Version, CorrelationID: 1},
		Body: req, FrameRelease: func() { close(released) }, Reply: func(r *wire.Response) { answered <- r }})
	select {
	case <-released:
	case <-answered:
		t.Fatal("answered while the fsync is held")
	case <-time.After(10 * time.Second):
		t.Fatal("the frame was not handed back while the answer waited for the fsync")
	}
	close(hold)
	select {
	case <-answered:
	case <-time.After(10 * time.Second):
		t.Fatal("no answer after the fsync")
	}
}
