package group

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/samsa-io/samsa/wire/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// harness drives a Coordinator the way the actor shell will: it keeps the
// log of appended records, arms timers, fires them as simulated time
// passes, and records every reply. It checks the core's promises on the
// way: a ticket is answered at most once, and when the test ends (after
// an hour of silence, so every session expires) every ticket was
// answered.
type harness struct {
	t       *testing.T
	cfg     Config
	c       *Coordinator
	now     time.Time
	log     []Record
	timers  map[TimerKey]time.Time
	replies map[int]kmsg.Response
	sent    int

	// holdAppends leaves appends pending until completeAppends.
	holdAppends bool
	held        []Append
	failNext    kerr.Code // the next append completes with this code

	// topics is what ConsumerGroupHeartbeat requests see of the cluster.
	topics TopicMap
}

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// seqUUID is a deterministic UUID source.
func seqUUID() func() [16]byte {
	var n uint64
	return func() (u [16]byte) {
		n++
		binary.BigEndian.PutUint64(u[8:], n)
		return u
	}
}

func testConfig() Config {
	return Config{NewUUID: seqUUID()}
}

func newHarness(t *testing.T) *harness {
	return newHarnessWith(t, testConfig())
}

func newHarnessWith(t *testing.T, cfg Config) *harness {
	h := &harness{
		t: t, cfg: cfg, c: NewCoordinator(cfg), now: t0,
		timers: map[TimerKey]time.Time{}, replies: map[int]kmsg.Response{},
	}
	t.Cleanup(h.checkNothingDangles)
	return h
}

// checkNothingDangles lets an hour pass with no client activity: every
// parked request must then have been answered.
func (h *harness) checkNothingDangles() {
	if h.t.Failed() {
		return
	}
	h.holdAppends = false
	h.completeAppends()
	h.advance(time.Hour)
	for i := 1; i <= h.sent; i++ {
		if h.replies[i] == nil {
			h.t.Errorf("request %d was never answered", i)
		}
	}
}

func (h *harness) apply(fx Effects) {
	h.t.Helper()
	for _, r := range fx.Replies {
		id, ok := r.To.(int)
		if !ok {
			h.t.Fatalf("reply to a ticket the harness never issued: %#v", r.To)
		}
		if h.replies[id] != nil {
			h.t.Fatalf("request %d answered twice: %#v then %#v", id, h.replies[id], r.Response)
		}
		checkEncodes(h.t, r.Response)
		h.replies[id] = r.Response
	}
	for _, k := range fx.Cancel {
		delete(h.timers, k)
	}
	for _, tm := range fx.Timers {
		h.timers[tm.Key] = tm.At
	}
	h.held = append(h.held, fx.Appends...)
	if !h.holdAppends {
		h.completeAppends()
	}
}

// completeAppends makes held appends durable (or fails the first with
// failNext), in order.
func (h *harness) completeAppends() {
	for len(h.held) > 0 {
		a := h.held[0]
		h.held = h.held[1:]
		code := h.failNext
		h.failNext = kerr.None
		if code == kerr.None {
			h.log = append(h.log, a.Records...)
		}
		h.apply(h.c.OnAppended(a, code, h.now))
	}
}

func (h *harness) send(req kmsg.Request, clientID string) int {
	h.t.Helper()
	h.sent++
	id := h.sent
	h.apply(h.c.Handle(id, req, Client{ID: clientID, Host: "/127.0.0.1", Topics: h.topics}, h.now))
	return id
}

// advance moves the clock, firing due timers in deadline order at their
// deadlines.
func (h *harness) advance(d time.Duration) {
	h.t.Helper()
	end := h.now.Add(d)
	for {
		var next TimerKey
		var at time.Time
		found := false
		for k, a := range h.timers {
			if !a.After(end) && (!found || a.Before(at) || a.Equal(at) && timerLess(k, next)) {
				next, at, found = k, a, true
			}
		}
		if !found {
			break
		}
		delete(h.timers, next)
		if at.After(h.now) {
			h.now = at
		}
		h.apply(h.c.OnTimer(next, h.now))
	}
	h.now = end
}

func timerLess(a, b TimerKey) bool {
	if a.Group != b.Group {
		return a.Group < b.Group
	}
	if a.Kind != b.Kind {
		return a.Kind < b.Kind
	}
	return a.Member < b.Member
}

func (h *harness) reply(id int) kmsg.Response { return h.replies[id] }

func (h *harness) joinResp(id int) *kmsg.JoinGroupResponse {
	h.t.Helper()
	r, ok := h.replies[id].(*kmsg.JoinGroupResponse)
	if !ok {
		h.t.Fatalf("request %d: want a JoinGroup answer, have %#v", id, h.replies[id])
	}
	return r
}

func (h *harness) syncResp(id int) *kmsg.SyncGroupResponse {
	h.t.Helper()
	r, ok := h.replies[id].(*kmsg.SyncGroupResponse)
	if !ok {
		h.t.Fatalf("request %d: want a SyncGroup answer, have %#v", id, h.replies[id])
	}
	return r
}

func (h *harness) group(id string) *Group {
	h.t.Helper()
	g := h.c.Group(id)
	if g == nil {
		h.t.Fatalf("group %q does not exist", id)
	}
	return g
}

func (h *harness) wantState(group string, s State) {
	h.t.Helper()
	if got := h.group(group).State(); got != s {
		h.t.Fatalf("group %q state %v, want %v", group, got, s)
	}
}

func (h *harness) wantCode(id int, want kerr.Code) {
	h.t.Helper()
	r := h.replies[id]
	if r == nil {
		h.t.Fatalf("request %d unanswered, want %v", id, want)
	}
	if got := errorCode(r); got != want {
		h.t.Fatalf("request %d answered %v, want %v (%#v)", id, got, want, r)
	}
}

func (h *harness) wantParked(ids ...int) {
	h.t.Helper()
	for _, id := range ids {
		if h.replies[id] != nil {
			h.t.Fatalf("request %d answered (%#v), want it parked", id, h.replies[id])
		}
	}
}

// errorCode is the top-level (or only) error code of a response.
func errorCode(r kmsg.Response) kerr.Code {
	switch r := r.(type) {
	case *kmsg.JoinGroupResponse:
		return kerr.Code(r.ErrorCode)
	case *kmsg.SyncGroupResponse:
		return kerr.Code(r.ErrorCode)
	case *kmsg.HeartbeatResponse:
		return kerr.Code(r.ErrorCode)
	case *kmsg.LeaveGroupResponse:
		return kerr.Code(r.ErrorCode)
	case *kmsg.OffsetDeleteResponse:
		return kerr.Code(r.ErrorCode)
	case *kmsg.ListGroupsResponse:
		return kerr.Code(r.ErrorCode)
	case *kmsg.OffsetFetchResponse:
		return kerr.Code(r.ErrorCode)
	case *kmsg.ConsumerGroupHeartbeatResponse:
		return kerr.Code(r.ErrorCode)
	case *kmsg.OffsetCommitResponse:
		if len(r.Topics) > 0 && len(r.Topics[0].Partitions) > 0 {
			return kerr.Code(r.Topics[0].Partitions[0].ErrorCode)
		}
	case *kmsg.DeleteGroupsResponse:
		if len(r.Groups) > 0 {
			return kerr.Code(r.Groups[0].ErrorCode)
		}
	case *kmsg.DescribeGroupsResponse:
		if len(r.Groups) > 0 {
			return kerr.Code(r.Groups[0].ErrorCode)
		}
	}
	return kerr.None
}

// Requests ---------------------------------------------------------------

// subscription is a ConsumerProtocolSubscription for topics.
func subscription(topics ...string) []byte {
	m := kmsg.NewConsumerMemberMetadata()
	m.Version = 0
	m.Topics = topics
	return m.AppendTo(nil)
}

type joinOpts struct {
	version   int16
	member    string
	instance  string
	session   time.Duration
	rebalance time.Duration
	ptype     string
	protocols []kmsg.JoinGroupRequestProtocol
	clientID  string
}

func rangeOn(topics ...string) []kmsg.JoinGroupRequestProtocol {
	return []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: subscription(topics...)}}
}

func (h *harness) join(group string, o joinOpts) int {
	h.t.Helper()
	req := kmsg.NewPtrJoinGroupRequest()
	req.Version = o.version
	if req.Version == 0 && o.version == 0 {
		req.Version = 9
	}
	if o.version < 0 {
		req.Version = 0
	}
	req.Group = group
	req.MemberID = o.member
	if o.instance != "" {
		req.InstanceID = &o.instance
	}
	req.SessionTimeoutMillis = int32(cmpOr(o.session, 10*time.Second) / time.Millisecond)
	req.RebalanceTimeoutMillis = int32(cmpOr(o.rebalance, 30*time.Second) / time.Millisecond)
	req.ProtocolType = "consumer"
	if o.ptype != "" {
		req.ProtocolType = o.ptype
	}
	req.Protocols = o.protocols
	if req.Protocols == nil {
		req.Protocols = rangeOn("t1")
	}
	return h.send(req, cmpOr(o.clientID, "client"))
}

func cmpOr[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

func (h *harness) sync(group, member string, gen int32, assign map[string][]byte) int {
	h.t.Helper()
	return h.syncV(group, member, "", gen, assign, 5)
}

func (h *harness) syncV(group, member, instance string, gen int32, assign map[string][]byte, version int16) int {
	h.t.Helper()
	req := kmsg.NewPtrSyncGroupRequest()
	req.Version = version
	req.Group, req.MemberID, req.Generation = group, member, gen
	if instance != "" {
		req.InstanceID = &instance
	}
	ids := make([]string, 0, len(assign))
	for id := range assign {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		req.GroupAssignment = append(req.GroupAssignment, kmsg.SyncGroupRequestGroupAssignment{MemberID: id, MemberAssignment: assign[id]})
	}
	return h.send(req, "client")
}

func (h *harness) heartbeat(group, member string, gen int32) int {
	h.t.Helper()
	return h.heartbeatI(group, member, "", gen)
}

func (h *harness) heartbeatI(group, member, instance string, gen int32) int {
	h.t.Helper()
	req := kmsg.NewPtrHeartbeatRequest()
	req.Version = 4
	req.Group, req.MemberID, req.Generation = group, member, gen
	if instance != "" {
		req.InstanceID = &instance
	}
	return h.send(req, "client")
}

func (h *harness) leave(group string, members ...kmsg.LeaveGroupRequestMember) int {
	h.t.Helper()
	req := kmsg.NewPtrLeaveGroupRequest()
	req.Version = 5
	req.Group = group
	req.Members = members
	return h.send(req, "client")
}

func (h *harness) commit(group, member string, gen int32, topic string, partition int32, offset int64) int {
	h.t.Helper()
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Version = 8
	req.Group, req.MemberID, req.Generation = group, member, gen
	req.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: topic, Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: partition, Offset: offset, LeaderEpoch: -1, Metadata: strPtr("m")}}}}
	return h.send(req, "client")
}

// fetched is the committed offset the group reports for topic/partition.
func (h *harness) fetched(group, topic string, partition int32) int64 {
	h.t.Helper()
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Version = 7
	req.Group = group
	req.Topics = []kmsg.OffsetFetchRequestTopic{{Topic: topic, Partitions: []int32{partition}}}
	r := h.reply(h.send(req, "client")).(*kmsg.OffsetFetchResponse)
	if r.ErrorCode != 0 || len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 1 {
		h.t.Fatalf("offset fetch: %#v", r)
	}
	return r.Topics[0].Partitions[0].Offset
}

// stableGroup brings n dynamic members into a Stable group through the
// KIP-394 round trip, the initial delay and a leader SyncGroup. It returns
// the member ids in join order (the first is the leader).
func (h *harness) stableGroup(group string, n int) []string {
	h.t.Helper()
	var ids []string
	var parked []int
	for i := range n {
		first := h.join(group, joinOpts{clientID: fmt.Sprintf("c%d", i)})
		h.wantCode(first, kerr.MemberIDRequired)
		id := h.joinResp(first).MemberID
		ids = append(ids, id)
		parked = append(parked, h.join(group, joinOpts{member: id, clientID: fmt.Sprintf("c%d", i)}))
	}
	// Members that join together extend the initial delay once.
	h.advance(2 * h.c.cfg.initialDelay())
	gen := int32(0)
	for _, p := range parked {
		h.wantCode(p, kerr.None)
		gen = h.joinResp(p).Generation
	}
	h.wantState(group, CompletingRebalance)
	var syncs []int
	assign := map[string][]byte{}
	for _, id := range ids {
		assign[id] = []byte("assignment-of-" + id)
	}
	for i := len(ids) - 1; i >= 0; i-- { // followers first, leader last
		var a map[string][]byte
		if i == 0 {
			a = assign
		}
		syncs = append(syncs, h.sync(group, ids[i], gen, a))
	}
	for i, s := range syncs {
		h.wantCode(s, kerr.None)
		id := ids[len(ids)-1-i]
		if got := string(h.syncResp(s).MemberAssignment); got != "assignment-of-"+id {
			h.t.Fatalf("member %s got assignment %q", id, got)
		}
	}
	h.wantState(group, Stable)
	return ids
}

func shortID(id string) string {
	if i := strings.IndexByte(id, '-'); i >= 0 {
		return id[:i]
	}
	return id
}

// checkEncodes encodes a response at its version and decodes it back: the
// shell will send exactly these bytes.
func checkEncodes(t *testing.T, r kmsg.Response) {
	t.Helper()
	b := r.AppendTo(nil)
	back := r.RequestKind().ResponseKind()
	back.SetVersion(r.GetVersion())
	if err := back.ReadFrom(b); err != nil {
		t.Fatalf("%T v%d does not round-trip: %v", r, r.GetVersion(), err)
	}
}
