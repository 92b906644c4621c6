package api

import (
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/coordinator"
	"github.com/samsa-io/samsa/actors/env"
	"github.com/samsa-io/samsa/actors/group"
	"github.com/samsa-io/samsa/actors/partition"
	"github.com/samsa-io/samsa/actors/routing"
	"github.com/samsa-io/samsa/segment"
	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/kerr"
)

// shellHarness runs one group coordinator actor against a fake
// __consumer_offsets partition actor whose every message (load reads,
// appends) the test receives and answers itself, so it decides when a
// read returns and when an append is durable.
type shellHarness struct {
	t       *testing.T
	s       *Services
	coord   *actor.PID
	toPart  chan any // messages the coordinator sent the partition
	topicOK string   // a topic the routing table knows (OffsetCommit checks)
}

func newShellHarness(t *testing.T, cfg group.Config) *shellHarness {
	return newShellHarnessAt(t, cfg, time.Now, 0)
}

// newShellHarnessAt runs the coordinator on clock now, with an expiry
// check every every (0: none).
func newShellHarnessAt(t *testing.T, cfg group.Config, now func() time.Time, every time.Duration) *shellHarness {
	t.Helper()
	h := &shellHarness{t: t, toPart: make(chan any, 16), topicOK: "orders"}
	sys := actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		return slog.New(slog.NewTextHandler(io.Discard, nil))
	}))
	t.Cleanup(sys.Shutdown)
	e := &env.Env{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), System: sys, Now: now, GatherTimeout: 10 * time.Second,
		Routes: routing.NewTable()}
	h.s = &Services{Env: e, Groups: coordinator.New(e, nil)}
	part := sys.Root.Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch m := c.Message().(type) {
		case *partition.ReadChunk, *partition.ProduceRequest:
			h.toPart <- m
		}
	}))
	other := sys.Root.Spawn(actor.PropsFromFunc(func(actor.Context) {}))
	e.Routes.Publish(&routing.Routes{Topics: map[string]*routing.Topic{
		coordinator.OffsetsTopic: {Name: coordinator.OffsetsTopic, Partitions: []*actor.PID{part}},
		h.topicOK:                {Name: h.topicOK, Partitions: []*actor.PID{other}},
	}})
	h.coord = sys.Root.Spawn(actor.PropsFromProducer(func() actor.Actor {
		return coordinator.NewActor(e, 0, cfg, every)
	}))
	h.s.Groups.Adopt([]*actor.PID{h.coord})
	return h
}

// next returns the next message the coordinator sent the partition.
func (h *shellHarness) next() any {
	h.t.Helper()
	select {
	case m := <-h.toPart:
		return m
	case <-time.After(5 * time.Second):
		h.t.Fatal("the coordinator sent the partition nothing")
		return nil
	}
}

// load answers the coordinator's load read from a real log holding
// batches (small: one read covers it, and the load ends).
func (h *shellHarness) load(batches ...[]byte) {
	h.t.Helper()
	dir, err := segment.OpenDir(h.t.TempDir(), segment.Options{})
	if err != nil {
		h.t.Fatal(err)
	}
	defer dir.Close()
	l, _, err := dir.Open(coordinator.OffsetsTopic, 0, segment.Config{SegmentBytes: 1 << 20, FlushPolicy: segment.FlushNever})
	if err != nil {
		h.t.Fatal(err)
	}
	defer l.Close()
	for _, b := range batches {
		if _, err := l.Append(b, 0, time.Now().UnixMilli()); err != nil {
			h.t.Fatal(err)
		}
	}
	p := partition.NewLocal(l, nil, 0, h.s.Env.Log)
	p.CatchUp()
	read, ok := h.next().(*partition.ReadChunk)
	if !ok {
		h.t.Fatal("the coordinator wrote while loading")
	}
	p.ReadChunk(read)
}

// ask sends a request through the router and returns a channel with its
// decoded answer.
func (h *shellHarness) ask(body kmsg.Request) <-chan kmsg.Response {
	out := make(chan kmsg.Response, 1)
	req := &wire.Request{Header: wire.RequestHeader{APIKey: body.Key(), APIVersion: body.GetVersion(), CorrelationID: 1},
		Body: body, ClientAddr: "127.0.0.1:5000"}
	req.Reply = func(r *wire.Response) {
		raw, err := r.AppendTo(nil)
		if err != nil {
			panic(err)
		}
		resp := body.ResponseKind()
		resp.SetVersion(body.GetVersion())
		raw = raw[8:]
		if resp.IsFlexible() {
			raw = raw[1:]
		}
		if err := resp.ReadFrom(raw); err != nil {
			panic(err)
		}
		out <- resp
	}
	handleGroupRequest(h.s, req)
	return out
}

func wait[T kmsg.Response](t *testing.T, ch <-chan kmsg.Response) T {
	t.Helper()
	select {
	case r := <-ch:
		return r.(T)
	case <-time.After(5 * time.Second):
		t.Fatal("no answer")
		var zero T
		return zero
	}
}

func commitReq(topic string, offset int64) *kmsg.OffsetCommitRequest {
	r := kmsg.NewPtrOffsetCommitRequest()
	r.Version, r.Group, r.Generation = 8, "g", -1
	rt := kmsg.NewOffsetCommitRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewOffsetCommitRequestTopicPartition()
	rp.Partition, rp.Offset = 0, offset
	rt.Partitions = append(rt.Partitions, rp)
	r.Topics = append(r.Topics, rt)
	return r
}

func offsetFetchReq() *kmsg.OffsetFetchRequest {
	r := kmsg.NewPtrOffsetFetchRequest()
	r.Version, r.Group = 5, "g"
	return r // null topics: every committed partition
}

// While the coordinator reads its partition, group requests get
// COORDINATOR_LOAD_IN_PROGRESS; what the log held is served after.
func TestGroupShellLoadInProgressThenReplayed(t *testing.T) {
	h := newShellHarness(t, group.Config{})
	first := h.next().(*partition.ReadChunk) // the load's first read, held back

	if r := wait[*kmsg.OffsetFetchResponse](t, h.ask(offsetFetchReq())); r.ErrorCode != kerr.CoordinatorLoadInProgress.Int16() {
		t.Fatalf("OffsetFetch during the load: %v, want COORDINATOR_LOAD_IN_PROGRESS", kerr.Code(r.ErrorCode))
	}

	// The log holds a commit of offset 42 (written as samsa writes it).
	ov := group.OffsetValue{Offset: 42, LeaderEpoch: -1, CommitTimestamp: 1, ExpireTimestamp: -1}
	batch := coordinator.BuildBatch([]group.Record{{Key: group.OffsetKeyBytes("g", "orders", 0), Value: group.OffsetValueBytes(ov)}}, 1)
	h.toPart <- first // hand the held read back to load
	h.load(batch)

	r := wait[*kmsg.OffsetFetchResponse](t, h.ask(offsetFetchReq()))
	if r.ErrorCode != 0 || len(r.Topics) != 1 || r.Topics[0].Partitions[0].Offset != 42 {
		t.Fatalf("OffsetFetch after the load: %+v, want orders/0 at 42", r)
	}
}

// A commit is answered only when its append is durable, and the append
// carries the commit's record; a failed append maps to the coordinator
// error the core chooses, and a commit to an unknown topic never reaches
// the log.
func TestGroupShellCommitAnsweredWhenDurable(t *testing.T) {
	h := newShellHarness(t, group.Config{})
	h.load()

	answer := h.ask(commitReq(h.topicOK, 7))
	pr := h.next().(*partition.ProduceRequest)
	var keys, values [][]byte
	if err := coordinator.ReplayBatches(pr.Records, func(k, v []byte) { keys, values = append(keys, k), append(values, v) }); err != nil {
		t.Fatal(err)
	}
	if len(keys) != 1 {
		t.Fatalf("append of %d records, want 1", len(keys))
	}
	k, _ := group.DecodeKey(keys[0])
	v, _ := group.DecodeOffsetValue(values[0])
	if k.Kind != group.KeyOffset || k.Topic != h.topicOK || v.Offset != 7 {
		t.Fatalf("appended %+v = %+v, want the commit of orders/0 at 7", k, v)
	}
	if pr.Acks != -1 {
		t.Errorf("append with acks %d, want -1 (wait for durability)", pr.Acks)
	}
	select {
	case <-answer:
		t.Fatal("the commit was answered before its append was durable")
	case <-time.After(50 * time.Millisecond):
	}
	pr.Out.ErrorCode = 0
	pr.Reply.Put(0)
	if r := wait[*kmsg.OffsetCommitResponse](t, answer); r.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("commit answered %v", kerr.Code(r.Topics[0].Partitions[0].ErrorCode))
	}

	answer = h.ask(commitReq(h.topicOK, 8))
	pr = h.next().(*partition.ProduceRequest)
	pr.Out.ErrorCode = kerr.KafkaStorageError.Int16()
	pr.Reply.Put(0)
	if r := wait[*kmsg.OffsetCommitResponse](t, answer); r.Topics[0].Partitions[0].ErrorCode != kerr.NotCoordinator.Int16() {
		t.Fatalf("commit with a failed append answered %v, want NOT_COORDINATOR", kerr.Code(r.Topics[0].Partitions[0].ErrorCode))
	}
	if r := wait[*kmsg.OffsetFetchResponse](t, h.ask(offsetFetchReq())); r.Topics[0].Partitions[0].Offset != 7 {
		t.Errorf("after a failed commit of 8 the offset is %d, want 7", r.Topics[0].Partitions[0].Offset)
	}

	// Unknown topic alone: answered here, no append.
	r := wait[*kmsg.OffsetCommitResponse](t, h.ask(commitReq("nope", 1)))
	if r.Topics[0].Topic != "nope" || r.Topics[0].Partitions[0].ErrorCode != kerr.UnknownTopicOrPartition.Int16() {
		t.Errorf("commit to an unknown topic: %+v, want UNKNOWN_TOPIC_OR_PARTITION", r)
	}
	// Mixed: the known part is appended, both parts answered.
	mixed := commitReq(h.topicOK, 9)
	mixed.Topics = append(mixed.Topics, commitReq("nope", 1).Topics[0])
	answer = h.ask(mixed)
	pr = h.next().(*partition.ProduceRequest)
	pr.Reply.Put(0)
	r = wait[*kmsg.OffsetCommitResponse](t, answer)
	codes := map[string]int16{}
	for _, rt := range r.Topics {
		codes[rt.Topic] = rt.Partitions[0].ErrorCode
	}
	if len(codes) != 2 || codes[h.topicOK] != 0 || codes["nope"] != kerr.UnknownTopicOrPartition.Int16() {
		t.Errorf("mixed commit answered %v, want orders NONE and nope UNKNOWN_TOPIC_OR_PARTITION", codes)
	}
	select {
	case m := <-h.toPart:
		t.Errorf("unexpected message to the partition: %T", m)
	default:
	}
}

// An Effects timer (here the initial rebalance delay) comes back as a
// message and ends the join phase: the parked JoinGroup is answered only
// after it.
func TestGroupShellTimerEndsJoinPhase(t *testing.T) {
	const delay = 80 * time.Millisecond
	h := newShellHarness(t, group.Config{InitialRebalanceDelay: delay})
	h.load()
	j := kmsg.NewPtrJoinGroupRequest()
	j.Version, j.Group, j.ProtocolType = 3, "g", "consumer"
	j.SessionTimeoutMillis, j.RebalanceTimeoutMillis = 10000, 10000
	j.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: []byte{0, 1, 0, 0, 0, 0, 0, 0, 0, 0}}}
	began := time.Now()
	r := wait[*kmsg.JoinGroupResponse](t, h.ask(j))
	if took := time.Since(began); took < delay {
		t.Errorf("JoinGroup answered after %v, before the %v initial delay ran out", took, delay)
	}
	if r.ErrorCode != 0 || r.Generation != 1 || r.LeaderID != r.MemberID {
		t.Fatalf("JoinGroup: %v generation %d, want NONE, generation 1, leader", kerr.Code(r.ErrorCode), r.Generation)
	}
}

// The periodic expiry check runs ExpireOffsets on the actor: once the
// clock passes offsets.retention.minutes after a commit of a group that
// never had members, the offset is tombstoned (appended) and gone.
func TestGroupShellExpiresOffsets(t *testing.T) {
	var clock atomic.Int64
	clock.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	now := func() time.Time { return time.Unix(0, clock.Load()) }
	h := newShellHarnessAt(t, group.Config{OffsetsRetention: time.Hour}, now, 10*time.Millisecond)
	h.load()
	answer := h.ask(commitReq(h.topicOK, 5))
	pr := h.next().(*partition.ProduceRequest)
	pr.Reply.Put(0)
	wait[*kmsg.OffsetCommitResponse](t, answer)

	clock.Add(int64(2 * time.Hour))
	pr = h.next().(*partition.ProduceRequest) // the expiry's tombstones
	var tombstones int
	if err := coordinator.ReplayBatches(pr.Records, func(k, v []byte) {
		if v == nil {
			tombstones++
		}
	}); err != nil {
		t.Fatal(err)
	}
	if tombstones == 0 {
		t.Fatal("expiry appended no tombstone")
	}
	pr.Reply.Put(0)
	// The tombstones' durability reaches the coordinator before this
	// request does (both are sent from here, in this order, to its
	// mailbox), so the offsets are gone by the time it is served.
	if r := wait[*kmsg.OffsetFetchResponse](t, h.ask(offsetFetchReq())); len(r.Topics) != 0 {
		t.Fatalf("offset still there after expiry: %+v", r.Topics)
	}
}

// OffsetDelete: partitions of unknown topics are UNKNOWN_TOPIC_OR_PARTITION,
// the known ones are deleted (a tombstone appended).
func TestGroupShellOffsetDeleteUnknownTopic(t *testing.T) {
	h := newShellHarness(t, group.Config{})
	h.load()
	answer := h.ask(commitReq(h.topicOK, 5))
	pr := h.next().(*partition.ProduceRequest)
	pr.Reply.Put(0)
	wait[*kmsg.OffsetCommitResponse](t, answer)

	del := kmsg.NewPtrOffsetDeleteRequest()
	del.Group = "g"
	for _, topic := range []string{h.topicOK, "nope"} {
		rt := kmsg.NewOffsetDeleteRequestTopic()
		rt.Topic = topic
		rt.Partitions = []kmsg.OffsetDeleteRequestTopicPartition{{Partition: 0}}
		del.Topics = append(del.Topics, rt)
	}
	answer = h.ask(del)
	pr = h.next().(*partition.ProduceRequest)
	pr.Reply.Put(0)
	r := wait[*kmsg.OffsetDeleteResponse](t, answer)
	codes := map[string]int16{}
	for _, rt := range r.Topics {
		codes[rt.Topic] = rt.Partitions[0].ErrorCode
	}
	if r.ErrorCode != 0 || codes[h.topicOK] != 0 || codes["nope"] != kerr.UnknownTopicOrPartition.Int16() {
		t.Errorf("OffsetDelete: top %v, partitions %v; want NONE, orders NONE, nope UNKNOWN_TOPIC_OR_PARTITION", r.ErrorCode, codes)
	}
	if f := wait[*kmsg.OffsetFetchResponse](t, h.ask(offsetFetchReq())); len(f.Topics) != 0 {
		t.Errorf("offset still committed after OffsetDelete: %+v", f.Topics)
	}
}
