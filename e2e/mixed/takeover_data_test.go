package mixed

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/testkit"
	"github.com/samsa-io/samsa/wire/batchtest"
)

// Topics of the takeover tests, each making the broker write one kind of
// file: plain (many segments and their indexes, a log start offset moved
// by DeleteRecords, producer snapshots), txn (aborted transactions: a
// .txnindex), compact (the cleaner and its cleaner-offset-checkpoint).
const (
	plainTopic   = "plain"
	txnTopic     = "txn"
	compactTopic = "compact"
	takeoverTxn  = "takeover-txn"
	takeoverGrp  = "takeover-group"
	compactKeys  = 20
	deletedUpTo  = 200 // DeleteRecords on plain-0
	segmentBytes = "16384"
)

// dataset is what the broker must serve after a takeover: every value of
// each plain partition in order, the committed and all values of txn, the
// latest value of each compacted key, the group's committed offsets, and
// an idempotent producer whose last batch a new run must recognise as a
// duplicate (its state comes from the producer snapshots and the log).
type dataset struct {
	plain      [2][]string // from offset 0; plain-0's first deletedUpTo are deleted
	committed  []string    // txn, read_committed
	all        []string    // txn, read_uncommitted: committed and aborted
	latest     map[string]string
	written    int // records written to compact
	groupAt    map[int32]int64
	pid        int64
	pidEpoch   int16
	nextSeq    int32
	lastBatch  []byte // the raw producer's last batch, resent as a duplicate
	lastOffset int64
	round      int
}

// createTopics creates the three topics, each with one replica, and
// small segments so that there are many.
func createTopics(t *testing.T, ctx context.Context, adm *kadm.Client) {
	t.Helper()
	small := map[string]*string{"segment.bytes": kadm.StringPtr(segmentBytes)}
	compact := map[string]*string{"segment.bytes": kadm.StringPtr("2048"), "cleanup.policy": kadm.StringPtr("compact"),
		"min.cleanable.dirty.ratio": kadm.StringPtr("0.01"), "segment.ms": kadm.StringPtr("100")}
	for _, tc := range []struct {
		topic   string
		parts   int32
		configs map[string]*string
	}{{plainTopic, 2, small}, {txnTopic, 1, small}, {compactTopic, 1, compact}} {
		resp, err := adm.CreateTopic(ctx, tc.parts, 1, tc.configs, tc.topic)
		if err == nil {
			err = resp.Err
		}
		if err != nil {
			t.Fatalf("create %s: %v", tc.topic, err)
		}
	}
}

// write adds one round of data through the broker now running, the same
// whichever kind it is.
func (d *dataset) write(t *testing.T, ctx context.Context, c *testkit.Cluster) {
	t.Helper()
	d.round++
	r := strconv.Itoa(d.round)
	// Batches well under the small segments' size, which a broker
	// refuses a batch over (RECORD_LIST_TOO_LARGE), and uncompressed, so
	// that plain has many segments (txn's are compressed).
	idem := client(t, c, kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerBatchMaxBytes(1500), kgo.ProducerBatchCompression(kgo.NoCompression()))
	var recs []*kgo.Record
	for p := range int32(2) {
		for i := range 1500 {
			v := fmt.Sprintf("r%s-p%d-%05d-%s", r, p, i, padding)
			recs = append(recs, &kgo.Record{Topic: plainTopic, Partition: p, Value: []byte(v)})
			d.plain[p] = append(d.plain[p], v)
		}
	}
	if err := idem.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("produce to %s: %v", plainTopic, err)
	}
	tx := client(t, c, kgo.TransactionalID(takeoverTxn), kgo.DefaultProduceTopic(txnTopic), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ProducerBatchMaxBytes(1500))
	for i, abort := range []bool{false, true, false, true, false} {
		vals := numbered(fmt.Sprintf("r%s-txn%d", r, i), 60)
		txnBatch(t, ctx, tx, vals, abort)
		d.all = append(d.all, vals...)
		if !abort {
			d.committed = append(d.committed, vals...)
		}
	}
	tx.Close()
	if d.latest == nil {
		d.latest = map[string]string{}
	}
	for i := range 40 * compactKeys {
		k, v := fmt.Sprintf("k%02d", i%compactKeys), fmt.Sprintf("r%s-v%04d-%s", r, i, padding)
		if err := idem.ProduceSync(ctx, &kgo.Record{Topic: compactTopic, Key: []byte(k), Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		d.latest[k] = v
		d.written++
	}
	d.rawProduce(t, ctx, c)
}

// padding makes records big enough that segments roll often.
var padding = strings.Repeat(".", 64)

// rawProduce writes three batches of a producer id of its own to
// plain-1 (sequence numbers carried across rounds), keeping the last for
// checkDuplicate.
func (d *dataset) rawProduce(t *testing.T, ctx context.Context, c *testkit.Cluster) {
	t.Helper()
	cl := client(t, c)
	if d.round == 1 {
		req := kmsg.NewPtrInitProducerIDRequest()
		req.TransactionTimeoutMillis = 60000
		resp, err := req.RequestWith(ctx, cl)
		if err == nil {
			err = kerr.ErrorForCode(resp.ErrorCode)
		}
		if err != nil {
			t.Fatalf("InitProducerId: %v", err)
		}
		d.pid, d.pidEpoch = resp.ProducerID, resp.ProducerEpoch
	}
	for range 3 {
		vals := [][]byte{}
		for i := range 5 {
			v := fmt.Sprintf("r%d-raw-%05d", d.round, int(d.nextSeq)+i)
			vals = append(vals, []byte(v))
			d.plain[1] = append(d.plain[1], v)
		}
		batch := batchtest.Build(batchtest.Values(time.Now().UnixMilli(), vals...), batchtest.Producer(d.pid, d.pidEpoch, d.nextSeq))
		p := produceRaw(t, ctx, cl, plainTopic, 1, batch)
		if p.ErrorCode != 0 {
			t.Fatalf("raw produce seq %d: %v", d.nextSeq, kerr.ErrorForCode(p.ErrorCode))
		}
		d.nextSeq += 5
		d.lastBatch, d.lastOffset = batch, p.BaseOffset
	}
}

// checkDuplicate resends the raw producer's last batch: a broker that
// loaded the producer's state answers with the original offset and
// appends nothing (plain-1's contents are checked after).
func (d *dataset) checkDuplicate(t *testing.T, ctx context.Context, c *testkit.Cluster) {
	t.Helper()
	p := produceRaw(t, ctx, client(t, c), plainTopic, 1, d.lastBatch)
	if p.ErrorCode != 0 || p.BaseOffset != d.lastOffset {
		t.Errorf("resent batch of producer %d: error %v, offset %d; want no error and the first write's offset %d "+
			"(the producer state was not taken over)", d.pid, kerr.ErrorForCode(p.ErrorCode), p.BaseOffset, d.lastOffset)
	}
}

func produceRaw(t *testing.T, ctx context.Context, cl *kgo.Client, topic string, partition int32, batch []byte) kmsg.ProduceResponseTopicPartition {
	t.Helper()
	p, _, err := testkit.ProduceBatch(ctx, cl, topic, partition, batch)
	if err != nil {
		t.Fatalf("produce: %v", err)
	}
	return p
}

// commitGroup consumes part of plain as group takeoverGrp and commits.
func (d *dataset) commitGroup(t *testing.T, ctx context.Context, c *testkit.Cluster) {
	t.Helper()
	adm := admin(t, c)
	offsets := kadm.Offsets{}
	d.groupAt = map[int32]int64{0: int64(len(d.plain[0]) / 2), 1: int64(len(d.plain[1]) / 3)}
	for p, at := range d.groupAt {
		offsets.AddOffset(plainTopic, p, at, -1)
	}
	resp, err := adm.CommitOffsets(ctx, takeoverGrp, offsets)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatalf("commit: %v", err)
	}
}

// deleteRecords moves plain-0's log start offset.
func deleteRecords(t *testing.T, ctx context.Context, c *testkit.Cluster) {
	t.Helper()
	offsets := kadm.Offsets{}
	offsets.AddOffset(plainTopic, 0, deletedUpTo, -1)
	resp, err := admin(t, c).DeleteRecords(ctx, offsets)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatalf("DeleteRecords: %v", err)
	}
}

// verify reads everything back from the broker now running.
func (d *dataset) verify(t *testing.T, ctx context.Context, c *testkit.Cluster, who string) {
	t.Helper()
	for p := range int32(2) {
		from := int64(0)
		if p == 0 {
			from = deletedUpTo
		}
		got := readPartition(t, ctx, c, plainTopic, p, from, kgo.ReadUncommitted(), len(d.plain[p])-int(from))
		if want := d.plain[p][from:]; !slices.Equal(got, want) {
			t.Errorf("%s serves %s-%d: %s", who, plainTopic, p, firstDifference(got, want))
		}
	}
	start := startOffset(t, ctx, c, plainTopic, 0)
	if start != deletedUpTo {
		t.Errorf("%s: %s-0 log start offset %d, want %d (log-start-offset-checkpoint)", who, plainTopic, start, deletedUpTo)
	}
	if got := readPartition(t, ctx, c, txnTopic, 0, 0, kgo.ReadCommitted(), len(d.committed)); !slices.Equal(got, d.committed) {
		t.Errorf("%s serves %s read_committed: %s", who, txnTopic, firstDifference(got, d.committed))
	}
	if got := readPartition(t, ctx, c, txnTopic, 0, 0, kgo.ReadUncommitted(), len(d.all)); !slices.Equal(got, d.all) {
		t.Errorf("%s serves %s read_uncommitted: %s", who, txnTopic, firstDifference(got, d.all))
	}
	d.verifyCompacted(t, ctx, c, who)
	fetched, err := admin(t, c).FetchOffsets(ctx, takeoverGrp)
	if err == nil {
		err = fetched.Error()
	}
	if err != nil {
		t.Fatalf("%s: fetching the group's offsets: %v", who, err)
	}
	for p, want := range d.groupAt {
		if o, ok := fetched.Lookup(plainTopic, p); !ok || o.At != want {
			t.Errorf("%s: group %s at %d on %s-%d, want %d", who, takeoverGrp, o.At, plainTopic, p, want)
		}
	}
	d.checkDuplicate(t, ctx, c)
}

// verifyCompacted reads compact to its end: the last value of each key
// must be the latest written.
func (d *dataset) verifyCompacted(t *testing.T, ctx context.Context, c *testkit.Cluster, who string) {
	t.Helper()
	end := endOffset(t, ctx, c, compactTopic, 0)
	cl := client(t, c, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{compactTopic: {0: kgo.NewOffset().AtStart()}}))
	last := map[string]string{}
	n := 0
	for ctx.Err() == nil {
		var next int64
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
			last[string(r.Key)] = string(r.Value)
			next = r.Offset + 1
			n++
		})
		if next >= end {
			break
		}
	}
	if !maps.Equal(last, d.latest) {
		t.Errorf("%s serves %s with the latest values of %d keys wrong", who, compactTopic, countDiff(last, d.latest))
	}
	t.Logf("%s: %s holds %d of the %d records written (compacted)", who, compactTopic, n, d.written)
}

func countDiff(a, b map[string]string) int {
	n := 0
	for k, v := range b {
		if a[k] != v {
			n++
		}
	}
	return n
}

// readPartition reads n records of one partition from offset from.
func readPartition(t *testing.T, ctx context.Context, c *testkit.Cluster, topic string, p int32, from int64,
	iso kgo.IsolationLevel, n int) []string {
	t.Helper()
	cl := client(t, c, kgo.FetchIsolationLevel(iso),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {p: kgo.NewOffset().At(from)}}))
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var got []string
	for len(got) < n && rctx.Err() == nil {
		fs := cl.PollFetches(rctx)
		fs.EachError(func(_ string, _ int32, err error) {
			if rctx.Err() == nil {
				t.Logf("fetch %s-%d: %v", topic, p, err)
			}
		})
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	return got
}

// startOffset and endOffset are a partition's log start and end offsets
// (ListOffsets earliest and latest).
func startOffset(t *testing.T, ctx context.Context, c *testkit.Cluster, topic string, p int32) int64 {
	t.Helper()
	return offsetOf(t, topic, p)(admin(t, c).ListStartOffsets(ctx, topic))
}

func endOffset(t *testing.T, ctx context.Context, c *testkit.Cluster, topic string, p int32) int64 {
	t.Helper()
	return offsetOf(t, topic, p)(admin(t, c).ListEndOffsets(ctx, topic))
}

func offsetOf(t *testing.T, topic string, p int32) func(kadm.ListedOffsets, error) int64 {
	return func(listed kadm.ListedOffsets, err error) int64 {
		t.Helper()
		if err == nil {
			err = listed.Error()
		}
		o, ok := listed.Lookup(topic, p)
		if err != nil || !ok {
			t.Fatalf("ListOffsets %s-%d: %v (found %v)", topic, p, err, ok)
		}
		return o.Offset
	}
}

func firstDifference(got, want []string) string {
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return fmt.Sprintf("record %d is %.30q, want %.30q (%d records, want %d)", i, got[i], want[i], len(got), len(want))
		}
	}
	return fmt.Sprintf("%d records, want %d", len(got), len(want))
}
