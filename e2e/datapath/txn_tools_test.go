package datapath

import (
	"context"
	"encoding/binary"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/testkit"
	"github.com/samsa-io/samsa/wire"
)

// transactionsCommand is kafka-transactions.sh's main class (kafka-tools).
const transactionsCommand = "org.apache.kafka.tools.TransactionsCommand"

// Kafka 3.9.1's kafka-transactions.sh against samsa: list and describe
// see an open transaction, describe-producers the partition's producer
// state, find-hanging finds nothing while the coordinator knows every
// open transaction and finds the one it does not know (a transactional
// batch written without a transactional id, which a broker without
// KIP-890's verification takes, as Kafka's before 3.6 did), and abort
// ends that one with an
// ABORT marker (DescribeProducers, then WriteTxnMarkers from the admin
// client), after which the last stable offset moves on and
// read_committed readers never see the aborted record.
func TestKafkaTransactionsTool(t *testing.T) {
	k := testkit.RequireKafka39(t)
	// Verification off (Kafka's transaction.partition.verification.enable):
	// with it, as in Kafka 3.9, the partition refuses the stray batch
	// that makes the hanging transaction below (INVALID_TXN_STATE).
	b := testkit.StartBroker(t, testkit.BrokerConfig{Args: []string{"--samsa.transactions.enable", "true",
		"--transaction.state.log.num.partitions", "3", "--transaction.partition.verification.enable", "false"}})
	requireDataPath(t, b.Addr())
	topic := topicName(t, "tools")
	createTopic(t, b.Addr(), topic, 1, nil)
	tool := func(args ...string) []map[string]string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		began := time.Now()
		out, err := k.Run(ctx, transactionsCommand, append([]string{"--bootstrap-server", b.Addr()}, args...)...)
		t.Logf("kafka-transactions %s (%v):\n%s", strings.Join(args, " "), time.Since(began).Round(time.Millisecond), out)
		if err != nil {
			t.Fatal(err)
		}
		return table(out)
	}

	// An open transaction of a franz-go transactional producer: offsets 0 and 1.
	const txnID = "samsa-e2e-tools-txn"
	ctx := deadline(t, 5*time.Minute)
	producer := newClient(t, b.Addr(), kgo.TransactionalID(txnID), kgo.DefaultProduceTopic(topic))
	if err := producer.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if err := producer.ProduceSync(ctx, kgo.StringRecord("committed-"+strconv.Itoa(i))).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}

	rows := tool("list")
	if r := find(rows, "TransactionalId", txnID); r == nil || r["TransactionState"] != "Ongoing" {
		t.Errorf("list: %v, want %s Ongoing", rows, txnID)
	}
	rows = tool("describe", "--transactional-id", txnID)
	if r := find(rows, "TransactionalId", txnID); r == nil || r["TransactionState"] != "Ongoing" || r["TopicPartitions"] != topic+"-0" {
		t.Errorf("describe: %v, want %s Ongoing on %s-0", rows, txnID, topic)
	}
	producerID := ""
	if len(rows) == 1 {
		producerID = rows[0]["ProducerId"]
	}
	rows = tool("describe-producers", "--topic", topic, "--partition", "0")
	if r := find(rows, "ProducerId", producerID); r == nil || r["CurrentTransactionStartOffset"] != "0" || r["LastSequence"] != "1" {
		t.Errorf("describe-producers: %v, want producer %s with a transaction from offset 0, last sequence 1", rows, producerID)
	}
	// Every open transaction is a candidate with a timeout of 0 minutes;
	// the coordinator has this one's partition, so it is not hanging.
	if rows := tool("find-hanging", "--topic", topic, "--max-transaction-timeout", "0"); len(rows) != 0 {
		t.Errorf("find-hanging while the coordinator knows the transaction: %v, want none", rows)
	}
	if err := producer.EndTransaction(ctx, kgo.TryCommit); err != nil { // marker at 2
		t.Fatal(err)
	}

	// A hanging transaction at offset 3: a transactional batch of a
	// producer id no coordinator has, its timestamp 20 minutes old so
	// that find-hanging's default 15 minutes counts it.
	cl := newClient(t, b.Addr())
	hangingID, hangingEpoch := hangingBatch(t, ctx, cl, topic, time.Now().Add(-20*time.Minute))
	rows = tool("find-hanging", "--topic", topic)
	if len(rows) != 1 || rows[0]["ProducerId"] != strconv.FormatInt(hangingID, 10) || rows[0]["StartOffset"] != "3" ||
		rows[0]["ProducerEpoch"] != strconv.Itoa(int(hangingEpoch)) {
		t.Fatalf("find-hanging: %v, want producer %d's transaction from offset 3", rows, hangingID)
	}
	adm := kadm.NewClient(cl)
	if lso := endOffset(t, ctx, adm, topic, true); lso != 3 {
		t.Errorf("last stable offset %d under the hanging transaction, want 3", lso)
	}
	tool("abort", "--topic", topic, "--partition", "0", "--start-offset", "3") // marker at 4
	if rows := tool("find-hanging", "--topic", topic); len(rows) != 0 {
		t.Errorf("find-hanging after abort: %v, want none", rows)
	}
	rows = tool("describe-producers", "--topic", topic, "--partition", "0")
	if r := find(rows, "ProducerId", strconv.FormatInt(hangingID, 10)); r == nil || r["CurrentTransactionStartOffset"] != "None" {
		t.Errorf("describe-producers after abort: %v, want producer %d with no transaction", rows, hangingID)
	}

	// Offset 5, then read_committed reads to the end without the aborted record.
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("after")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if lso, hw := endOffset(t, ctx, adm, topic, true), endOffset(t, ctx, adm, topic, false); lso != 6 || hw != 6 {
		t.Errorf("after abort: last stable offset %d, high watermark %d; want 6 and 6", lso, hw)
	}
	consumer := newClient(t, b.Addr(), kgo.ConsumeTopics(topic), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	var got []string
	for len(got) < 3 && ctx.Err() == nil {
		consumer.PollFetches(ctx).EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	if strings.Join(got, ",") != "committed-0,committed-1,after" {
		t.Errorf("read_committed read %q, want committed-0, committed-1, after", got)
	}
}

// hangingBatch writes one transactional record to topic partition 0 for
// a new idempotent producer id, through a Produce request without a
// transactional id, and returns the producer id and epoch.
func hangingBatch(t *testing.T, ctx context.Context, cl *kgo.Client, topic string, ts time.Time) (int64, int16) {
	t.Helper()
	init := kmsg.NewPtrInitProducerIDRequest()
	init.TransactionTimeoutMillis = 60000
	initResp, err := init.RequestWith(ctx, cl)
	if err != nil || initResp.ErrorCode != 0 {
		t.Fatalf("InitProducerId: %v %+v", err, initResp)
	}
	rec := kmsg.Record{Value: []byte("hanging")}
	rec.Length = int32(len(rec.AppendTo(nil)) - 1) // everything after the length varint (1 byte for 0)
	batch := kmsg.RecordBatch{
		PartitionLeaderEpoch: -1, Magic: 2, Attributes: 0x10, // transactional
		FirstTimestamp: ts.UnixMilli(), MaxTimestamp: ts.UnixMilli(),
		ProducerID: initResp.ProducerID, ProducerEpoch: initResp.ProducerEpoch, FirstSequence: 0,
		NumRecords: 1, Records: rec.AppendTo(nil),
	}
	raw := batch.AppendTo(nil)
	binary.BigEndian.PutUint32(raw[8:], uint32(len(raw)-12))
	binary.BigEndian.PutUint32(raw[wire.BatchCRCPos:], wire.CRC32C(raw[wire.BatchAttributesPos:]))
	req := kmsg.NewPtrProduceRequest()
	req.Acks, req.TimeoutMillis = -1, 10000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = raw
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if p := resp.Topics[0].Partitions[0]; p.ErrorCode != 0 || p.BaseOffset != 3 {
		t.Fatalf("hanging batch: code %d at offset %d, want 0 at 3", p.ErrorCode, p.BaseOffset)
	}
	return initResp.ProducerID, initResp.ProducerEpoch
}

// endOffset is partition 0's latest offset: the last stable offset for
// read_committed, else the high watermark.
func endOffset(t *testing.T, ctx context.Context, adm *kadm.Client, topic string, committed bool) int64 {
	t.Helper()
	list := adm.ListEndOffsets
	if committed {
		list = adm.ListCommittedOffsets
	}
	offs, err := list(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	o, ok := offs.Lookup(topic, 0)
	if !ok || o.Err != nil {
		t.Fatalf("end offset of %s: %v %v", topic, ok, o.Err)
	}
	return o.Offset
}

// table parses a kafka-transactions table (a header row, then a row per
// entry, columns separated by spaces; lines before the header, such as
// JVM warnings, are skipped) into one map per row. The header is the
// first line whose first word is one of the tool's first column names.
func table(out string) []map[string]string {
	var header []string
	var rows []map[string]string
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 0:
		case header == nil:
			switch f[0] {
			case "TransactionalId", "CoordinatorId", "ProducerId", "Topic":
				header = f
			}
		case len(f) == len(header):
			r := map[string]string{}
			for i, h := range header {
				r[h] = f[i]
			}
			rows = append(rows, r)
		}
	}
	return rows
}

// find returns the first row whose column is value.
func find(rows []map[string]string, column, value string) map[string]string {
	for _, r := range rows {
		if r[column] == value {
			return r
		}
	}
	return nil
}
