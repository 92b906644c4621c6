package sharegroup_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/testkit"
)

// shareClient speaks the share APIs through franz-go's raw requests (kgo
// has no share consumer): it joins, fetches and acknowledges as one
// member, keeping its share session epoch.
type shareClient struct {
	t       *testing.T
	cl      *kgo.Client
	group   string
	member  string
	epoch   int32 // member epoch
	session int32 // next share session epoch
	topic   [16]byte
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func join(t *testing.T, n *testkit.InProcess, group, member, topic string) *shareClient {
	t.Helper()
	c := &shareClient{t: t, cl: n.Client(t), group: group, member: member}
	hb := kmsg.NewPtrShareGroupHeartbeatRequest()
	hb.Version = 1
	hb.GroupID, hb.MemberID, hb.MemberEpoch, hb.SubscribedTopicNames = group, member, 0, []string{topic}
	resp, err := hb.RequestWith(ctxT(t), c.cl)
	if err != nil {
		t.Fatal(err)
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		t.Fatalf("join %s: %v", member, err)
	}
	if resp.Assignment == nil || len(resp.Assignment.TopicPartitions) != 1 {
		t.Fatalf("join %s: assignment %+v", member, resp.Assignment)
	}
	c.epoch, c.topic = resp.MemberEpoch, resp.Assignment.TopicPartitions[0].TopicID
	return c
}

type ack struct {
	first, last int64
	typ         int8 // 1 accept, 2 release, 3 reject
}

type delivered struct {
	offsets    []int64
	deliveries map[int64]int16
	values     map[int64]string
}

func ackBatches(acks []ack) []kmsg.ShareFetchRequestTopicPartitionAcknowledgementBatch {
	var out []kmsg.ShareFetchRequestTopicPartitionAcknowledgementBatch
	for _, a := range acks {
		b := kmsg.NewShareFetchRequestTopicPartitionAcknowledgementBatch()
		b.FirstOffset, b.LastOffset, b.AcknowledgeTypes = a.first, a.last, []int8{a.typ}
		out = append(out, b)
	}
	return out
}

// check fails the test on a transport error or a top-level error code,
// and moves the share session on.
func (c *shareClient) check(what string, err error, code int16) {
	c.t.Helper()
	if err != nil {
		c.t.Fatal(err)
	}
	if err := kerr.ErrorForCode(code); err != nil {
		c.t.Fatalf("%s %s: %v", c.member, what, err)
	}
	c.session++
}

// fetch sends a ShareFetch (with acks) and returns what it acquired.
func (c *shareClient) fetch(maxWait time.Duration, maxRecords int32, acks ...ack) delivered {
	c.t.Helper()
	resp, err := c.fetchRequest(maxWait, maxRecords, acks...).RequestWith(ctxT(c.t), c.cl)
	return c.acquired(resp, err)
}

// fetchRequest is the ShareFetch of partition 0 under the share session.
func (c *shareClient) fetchRequest(maxWait time.Duration, maxRecords int32, acks ...ack) *kmsg.ShareFetchRequest {
	req := kmsg.NewPtrShareFetchRequest()
	req.Version = 1
	req.GroupID, req.MemberID = &c.group, &c.member
	req.ShareSessionEpoch = c.session
	req.MaxWaitMillis, req.MinBytes, req.MaxBytes, req.MaxRecords, req.BatchSize = int32(maxWait.Milliseconds()), 1, 1<<20, maxRecords, maxRecords
	tp := kmsg.NewShareFetchRequestTopic()
	tp.TopicID = c.topic
	p := kmsg.NewShareFetchRequestTopicPartition()
	p.Partition, p.PartitionMaxBytes = 0, 1<<20
	p.AcknowledgementBatches = ackBatches(acks)
	tp.Partitions = append(tp.Partitions, p)
	req.Topics = append(req.Topics, tp)
	return req
}

// acquired checks a ShareFetch's answer and returns what it acquired.
func (c *shareClient) acquired(resp *kmsg.ShareFetchResponse, err error) delivered {
	c.t.Helper()
	if err != nil {
		c.t.Fatal(err)
	}
	c.check("ShareFetch", err, resp.ErrorCode)
	out := delivered{deliveries: map[int64]int16{}, values: map[int64]string{}}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				c.t.Fatalf("%s ShareFetch partition: %v", c.member, err)
			}
			if err := kerr.ErrorForCode(p.AcknowledgeErrorCode); err != nil {
				c.t.Fatalf("%s ShareFetch acknowledgement: %v", c.member, err)
			}
			values := recordValues(c.t, p.Records)
			for _, ar := range p.AcquiredRecords {
				for o := ar.FirstOffset; o <= ar.LastOffset; o++ {
					v, ok := values[o]
					if !ok {
						c.t.Fatalf("%s: offset %d acquired but not in the records sent", c.member, o)
					}
					out.offsets = append(out.offsets, o)
					out.deliveries[o] = ar.DeliveryCount
					out.values[o] = v
				}
			}
		}
	}
	return out
}

// acknowledge sends a ShareAcknowledge.
func (c *shareClient) acknowledge(acks ...ack) {
	c.t.Helper()
	req := kmsg.NewPtrShareAcknowledgeRequest()
	req.Version = 1
	req.GroupID, req.MemberID, req.ShareSessionEpoch = &c.group, &c.member, c.session
	tp := kmsg.NewShareAcknowledgeRequestTopic()
	tp.TopicID = c.topic
	p := kmsg.NewShareAcknowledgeRequestTopicPartition()
	for _, b := range ackBatches(acks) {
		p.AcknowledgementBatches = append(p.AcknowledgementBatches, kmsg.ShareAcknowledgeRequestTopicPartitionAcknowledgementBatch(b))
	}
	tp.Partitions = append(tp.Partitions, p)
	req.Topics = append(req.Topics, tp)
	resp, err := req.RequestWith(ctxT(c.t), c.cl)
	c.check("ShareAcknowledge", err, resp.ErrorCode)
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				c.t.Fatalf("%s ShareAcknowledge partition: %v", c.member, err)
			}
		}
	}
}

// recordValues decodes uncompressed batches into value by offset.
func recordValues(t *testing.T, b []byte) map[int64]string {
	t.Helper()
	out := map[int64]string{}
	for len(b) > 0 {
		var batch kmsg.RecordBatch
		if err := batch.ReadFrom(b); err != nil {
			t.Fatalf("records: %v", err)
		}
		b = b[12+int(batch.Length):]
		if batch.Attributes&0x07 != 0 {
			t.Fatal("a compressed batch; the test produces uncompressed")
		}
		recs := batch.Records
		for i := int32(0); i < batch.NumRecords; i++ {
			var r kmsg.Record
			if err := r.ReadFrom(recs); err != nil {
				t.Fatalf("record: %v", err)
			}
			// Length is the varint-prefixed size of what follows it.
			n := varintLen(int64(r.Length))
			recs = recs[n+int(r.Length):]
			out[batch.FirstOffset+int64(r.OffsetDelta)] = string(r.Value)
		}
	}
	return out
}

func varintLen(v int64) int {
	u := uint64((v << 1) ^ (v >> 63))
	n := 1
	for u >= 0x80 {
		u >>= 7
		n++
	}
	return n
}

// setGroupConfigs sets a group's configs (names and values in pairs)
// with IncrementalAlterConfigs on its GROUP resource and returns the
// error the broker answered, with its message.
func setGroupConfigs(t *testing.T, cl *kgo.Client, group string, kv ...string) error {
	t.Helper()
	alter := kmsg.NewPtrIncrementalAlterConfigsRequest()
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeGroupConfig, group
	for i := 0; i+1 < len(kv); i += 2 {
		cfg := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		cfg.Name, cfg.Value = kv[i], kmsg.StringPtr(kv[i+1])
		res.Configs = append(res.Configs, cfg)
	}
	alter.Resources = append(alter.Resources, res)
	ar, err := alter.RequestWith(ctxT(t), cl)
	if err != nil {
		t.Fatal(err)
	}
	if err := kerr.ErrorForCode(ar.Resources[0].ErrorCode); err != nil {
		if m := ar.Resources[0].ErrorMessage; m != nil {
			return fmt.Errorf("%w: %s", err, *m)
		}
		return err
	}
	return nil
}

// startWithTopic starts a broker configured by kv with a one-partition
// topic.
func startWithTopic(t *testing.T, topic string, kv ...string) *testkit.InProcess {
	t.Helper()
	n := testkit.StartInProcess(t, kv...)
	adm, _ := n.Admin(t)
	if _, err := adm.CreateTopics(ctxT(t), 1, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
	return n
}

// produceEach produces records v<from>... one batch each, so a share
// fetch's record count splits them exactly (acquisitions end on batch
// boundaries).
func produceEach(t *testing.T, n *testkit.InProcess, topic string, from, count int) {
	t.Helper()
	for i := from; i < from+count; i++ {
		produce(t, n, topic, i, 1)
	}
}

func produce(t *testing.T, n *testkit.InProcess, topic string, from, count int) {
	t.Helper()
	cl := n.Client(t, kgo.DefaultProduceTopic(topic), kgo.ProducerBatchCompression(kgo.NoCompression()))
	var rs []*kgo.Record
	for i := from; i < from+count; i++ {
		rs = append(rs, &kgo.Record{Value: fmt.Appendf(nil, "v%d", i)})
	}
	if err := cl.ProduceSync(ctxT(t), rs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// TestShareGroupLifecycle drives two members of one share group through
// franz-go's raw share requests: the records are split between them
// with no record held by both, a release redelivers, an expired lock
// redelivers, a reject and the delivery limit archive, and a broker
// restart keeps every acknowledgement.
func TestShareGroupLifecycle(t *testing.T) {
	dir := t.TempDir()
	n := testkit.StartInProcess(t, "log.dirs", dir, "group.share.record.lock.duration.ms", "1000",
		"group.share.min.record.lock.duration.ms", "1000", "group.share.delivery.count.limit", "3")
	adm, _ := n.Admin(t)
	if _, err := adm.CreateTopics(ctxT(t), 1, 1, nil, "sq"); err != nil {
		t.Fatal(err)
	}
	a := join(t, n, "g", "member-a", "sq")
	b := join(t, n, "g", "member-b", "sq")
	// The first fetches start the share partition at the latest offset
	// (share.auto.offset.reset's default): 0 on an empty topic.
	if got := a.fetch(0, 100); len(got.offsets) != 0 {
		t.Fatalf("empty topic delivered %v", got.offsets)
	}
	if got := b.fetch(0, 100); len(got.offsets) != 0 {
		t.Fatalf("empty topic delivered %v", got.offsets)
	}
	produceEach(t, n, "sq", 0, 10)

	ga := a.fetch(5*time.Second, 4)
	gb := b.fetch(5*time.Second, 100)
	if !slices.Equal(ga.offsets, []int64{0, 1, 2, 3}) || !slices.Equal(gb.offsets, []int64{4, 5, 6, 7, 8, 9}) {
		t.Fatalf("a got %v, b got %v; want 0-3 and 4-9", ga.offsets, gb.offsets)
	}
	if ga.values[2] != "v2" || gb.values[9] != "v9" || ga.deliveries[0] != 1 {
		t.Fatalf("values %v %v deliveries %v", ga.values, gb.values, ga.deliveries)
	}
	// a releases 0-1 and accepts 2-3: b gets 0-1 again, second delivery.
	a.acknowledge(ack{0, 1, 2}, ack{2, 3, 1})
	g2 := b.fetch(5*time.Second, 100)
	if !slices.Equal(g2.offsets, []int64{0, 1}) || g2.deliveries[0] != 2 {
		t.Fatalf("after a's release b got %v (deliveries %v), want 0-1 delivered twice", g2.offsets, g2.deliveries)
	}
	// b accepts 0-1 with its next fetch and forgets 4-9: their locks run
	// out and a gets them on its long poll.
	if got := b.fetch(0, 100, ack{0, 1, 1}); len(got.offsets) != 0 {
		t.Fatalf("b got %v while every record is locked", got.offsets)
	}
	g3 := a.fetch(10*time.Second, 100)
	if !slices.Equal(g3.offsets, []int64{4, 5, 6, 7, 8, 9}) || g3.deliveries[4] != 2 {
		t.Fatalf("after b's locks expired a got %v (deliveries %v)", g3.offsets, g3.deliveries)
	}
	// a rejects 4 and releases 5-9; a third delivery of 5-9, released
	// again, uses the limit (3): archived.
	a.acknowledge(ack{4, 4, 3}, ack{5, 9, 2})
	g4 := b.fetch(5*time.Second, 100)
	if !slices.Equal(g4.offsets, []int64{5, 6, 7, 8, 9}) || g4.deliveries[5] != 3 {
		t.Fatalf("third delivery %v (deliveries %v), want 5-9 at 3", g4.offsets, g4.deliveries)
	}
	b.acknowledge(ack{5, 6, 2}, ack{7, 9, 1})
	if got := a.fetch(300*time.Millisecond, 100); len(got.offsets) != 0 {
		t.Fatalf("archived or accepted records redelivered: %v", got.offsets)
	}

	// Restart: every acknowledgement was durable before it was answered.
	n.Restart()
	a = join(t, n, "g", "member-a", "sq")
	produce(t, n, "sq", 10, 2)
	got := a.fetch(5*time.Second, 100)
	if !slices.Equal(got.offsets, []int64{10, 11}) {
		t.Fatalf("after the restart a got %v, want only the new 10-11", got.offsets)
	}

	// DescribeShareGroupOffsets: 0-9 finished, 10-11 locked by a: start
	// 10, lag 2.
	o := kmsg.NewPtrDescribeShareGroupOffsetsRequest()
	o.Version = 1
	og := kmsg.NewDescribeShareGroupOffsetsRequestGroup()
	og.GroupID = "g"
	o.Groups = append(o.Groups, og)
	or, err := o.RequestWith(ctxT(t), a.cl)
	if err != nil {
		t.Fatal(err)
	}
	if len(or.Groups) != 1 || len(or.Groups[0].Topics) != 1 || or.Groups[0].Topics[0].Topic != "sq" ||
		len(or.Groups[0].Topics[0].Partitions) != 1 {
		t.Fatalf("describe offsets: %+v", or.Groups)
	}
	if p := or.Groups[0].Topics[0].Partitions[0]; p.StartOffset != 10 || p.Lag != 2 || p.ErrorCode != 0 {
		t.Fatalf("describe offsets: partition %+v, want start 10 lag 2", p)
	}

	d := kmsg.NewPtrShareGroupDescribeRequest()
	d.Version = 1
	d.GroupIDs = []string{"g", "nope"}
	dr, err := d.RequestWith(ctxT(t), a.cl)
	if err != nil {
		t.Fatal(err)
	}
	if len(dr.Groups) != 2 || dr.Groups[0].GroupState != "Stable" || len(dr.Groups[0].Members) != 1 || dr.Groups[0].Members[0].MemberID != "member-a" ||
		dr.Groups[1].ErrorCode != kerr.GroupIDNotFound.Code {
		t.Fatalf("describe: %+v", dr.Groups)
	}
}

// TestShareGroupEarliest: a group whose share.auto.offset.reset is
// earliest (IncrementalAlterConfigs on its GROUP resource) starts at the
// log start and gets the records produced before it joined; the default
// (latest) group does not.
func TestShareGroupEarliest(t *testing.T) {
	n := startWithTopic(t, "se")
	_, cl := n.Admin(t)
	produce(t, n, "se", 0, 3)
	if err := setGroupConfigs(t, cl, "early", "share.auto.offset.reset", "earliest"); err != nil {
		t.Fatalf("setting share.auto.offset.reset: %v", err)
	}
	early := join(t, n, "early", "m1", "se")
	if got := early.fetch(5*time.Second, 100); !slices.Equal(got.offsets, []int64{0, 1, 2}) {
		t.Fatalf("earliest group got %v, want 0-2", got.offsets)
	}
	late := join(t, n, "late", "m1", "se")
	if got := late.fetch(200*time.Millisecond, 100); len(got.offsets) != 0 {
		t.Fatalf("latest group got %v, want nothing", got.offsets)
	}
}

// TestShareGroupAlterDeleteOffsets: AlterShareGroupOffsets starts an
// empty group's share partition where asked, is refused with members in
// the group (NON_EMPTY_GROUP), and DeleteShareGroupOffsets forgets it.
func TestShareGroupAlterDeleteOffsets(t *testing.T) {
	n := startWithTopic(t, "sa")
	_, cl := n.Admin(t)
	produce(t, n, "sa", 0, 5)
	alter := func() int16 {
		req := kmsg.NewPtrAlterShareGroupOffsetsRequest()
		req.GroupID = "ad"
		rt := kmsg.NewAlterShareGroupOffsetsRequestTopic()
		rt.Topic = "sa"
		rp := kmsg.NewAlterShareGroupOffsetsRequestTopicPartition()
		rp.Partition, rp.StartOffset = 0, 2
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctxT(t), cl)
		if err != nil {
			t.Fatal(err)
		}
		if resp.ErrorCode == 0 && (len(resp.Topics) != 1 || resp.Topics[0].Partitions[0].ErrorCode != 0) {
			t.Fatalf("alter: %+v", resp.Topics)
		}
		return resp.ErrorCode
	}
	if code := alter(); code != 0 {
		t.Fatalf("alter on an empty group: %v", kerr.ErrorForCode(code))
	}
	m := join(t, n, "ad", "m1", "sa")
	if got := m.fetch(5*time.Second, 100); !slices.Equal(got.offsets, []int64{2, 3, 4}) {
		t.Fatalf("after altering the start to 2 got %v", got.offsets)
	}
	if code := alter(); code != kerr.NonEmptyGroup.Code {
		t.Fatalf("alter with a member: %v, want NON_EMPTY_GROUP", kerr.ErrorForCode(code))
	}
	leave := kmsg.NewPtrShareGroupHeartbeatRequest()
	leave.Version = 1
	leave.GroupID, leave.MemberID, leave.MemberEpoch = "ad", "m1", -1
	if resp, err := leave.RequestWith(ctxT(t), cl); err != nil || resp.ErrorCode != 0 {
		t.Fatalf("leave: %v %v", err, resp)
	}
	del := kmsg.NewPtrDeleteShareGroupOffsetsRequest()
	del.GroupID = "ad"
	del.Topics = append(del.Topics, kmsg.DeleteShareGroupOffsetsRequestTopic{Topic: "sa"})
	dr, err := del.RequestWith(ctxT(t), cl)
	if err != nil || dr.ErrorCode != 0 || len(dr.Topics) != 1 || dr.Topics[0].ErrorCode != 0 {
		t.Fatalf("delete: %v %+v", err, dr)
	}
	o := kmsg.NewPtrDescribeShareGroupOffsetsRequest()
	og := kmsg.NewDescribeShareGroupOffsetsRequestGroup()
	og.GroupID = "ad"
	og.Topics = []kmsg.DescribeShareGroupOffsetsRequestGroupTopic{{Topic: "sa", Partitions: []int32{0}}}
	o.Groups = append(o.Groups, og)
	or, err := o.RequestWith(ctxT(t), cl)
	if err != nil {
		t.Fatal(err)
	}
	if p := or.Groups[0].Topics[0].Partitions[0]; p.StartOffset != -1 {
		t.Fatalf("after delete the share partition still starts at %d", p.StartOffset)
	}
}

// A fetch's record count is a soft limit, as in Kafka 4.1: the
// acquisition ends on a batch boundary, so a batch goes out once, whole,
// and not again with every later fetch.
func TestShareFetchAcquiresWholeBatches(t *testing.T) {
	n := startWithTopic(t, "sb")
	a := join(t, n, "g", "member-a", "sb")
	if got := a.fetch(0, 100); len(got.offsets) != 0 {
		t.Fatalf("empty topic delivered %v", got.offsets)
	}
	produce(t, n, "sb", 0, 10) // one batch of 10
	produce(t, n, "sb", 10, 5) // and one of 5
	got := a.fetch(5*time.Second, 4)
	if want := []int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}; !slices.Equal(got.offsets, want) {
		t.Fatalf("a fetch of 4 from a batch of 10 acquired %v, want the whole batch %v", got.offsets, want)
	}
	if got := a.fetch(5*time.Second, 4); !slices.Equal(got.offsets, []int64{10, 11, 12, 13, 14}) {
		t.Fatalf("the next fetch of 4 acquired %v, want the second batch, 10-14", got.offsets)
	}
}
