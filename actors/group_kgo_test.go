package actors_test

import (
	"context"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/testkit"
)

// groupNode is a broker with fast groups: no initial rebalance delay and
// few __consumer_offsets partitions.
func groupNode(t *testing.T, dir string) *testkit.InProcess {
	return testkit.StartInProcess(t, "log.dirs", dir, "group.initial.rebalance.delay.ms", "0", "offsets.topic.num.partitions", "4")
}

func produceN(t *testing.T, addr, topic string, n int) {
	t.Helper()
	produceValues(t, addr, topic, "", n)
}

// produceValues produces n records, values prefix+"0" .. prefix+(n-1),
// round robin over the partitions.
func produceValues(t *testing.T, addr, topic, prefix string, n int) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var rs []*kgo.Record
	for i := range n {
		rs = append(rs, &kgo.Record{Value: []byte(prefix + strconv.Itoa(i))})
	}
	if err := cl.ProduceSync(ctxT(t), rs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// Two franz-go group members share a topic: every record is consumed
// once, the commits are visible through kadm (FetchOffsets,
// DescribeGroups), and after a restart the coordinator has reloaded them
// from __consumer_offsets.
func TestGroupConsumeCommitRestart(t *testing.T) {
	dir := t.TempDir()
	n := groupNode(t, dir)
	adm, _ := n.Admin(t)
	ctx := ctxT(t)
	if _, err := adm.CreateTopics(ctx, 4, 1, nil, "gt"); err != nil {
		t.Fatal(err)
	}
	const total = 200
	produceN(t, n.Addr, "gt", total)

	var mu sync.Mutex
	seen := map[string]int{}
	all := make(chan struct{}) // closed once every record has been seen
	// What each member holds, from its assignment callbacks. A member
	// runs its OnPartitionsAssigned after its SyncGroup answer, which the
	// coordinator gives only once the group is Stable; when the two
	// members hold all four partitions between them, the cooperative
	// rebalance is over (no member has anything left to give up, so none
	// rejoins) and balanced is closed.
	const members, partitions = 2, 4
	owned := make([]map[int32]bool, members)
	balanced := make(chan struct{})
	track := func(m int, add bool) func(context.Context, *kgo.Client, map[string][]int32) {
		return func(_ context.Context, _ *kgo.Client, ps map[string][]int32) {
			mu.Lock()
			defer mu.Unlock()
			for _, p := range ps["gt"] {
				if add {
					owned[m][p] = true
				} else {
					delete(owned[m], p)
				}
			}
			held := map[int32]bool{}
			for _, o := range owned {
				if len(o) == 0 {
					return
				}
				for p := range o {
					held[p] = true
				}
			}
			if len(held) == partitions && len(owned[0])+len(owned[1]) == partitions {
				select {
				case <-balanced:
				default:
					close(balanced)
				}
			}
		}
	}
	consume := func(cl *kgo.Client, stop <-chan struct{}) {
		for {
			select {
			case <-stop:
				return
			default:
			}
			pctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
			fs := cl.PollFetches(pctx)
			cancel()
			fs.EachRecord(func(r *kgo.Record) {
				mu.Lock()
				seen[string(r.Value)]++
				if len(seen) == total && seen[string(r.Value)] == 1 {
					close(all)
				}
				mu.Unlock()
			})
			if err := cl.CommitUncommittedOffsets(ctx); err != nil && ctx.Err() == nil {
				t.Errorf("commit: %v", err)
			}
		}
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var clients []*kgo.Client
	for m := range members {
		owned[m] = map[int32]bool{}
		cl, err := kgo.NewClient(kgo.SeedBrokers(n.Addr), kgo.ConsumerGroup("g1"), kgo.ConsumeTopics("gt"),
			kgo.DisableAutoCommit(), kgo.SessionTimeout(6*time.Second),
			kgo.OnPartitionsAssigned(track(m, true)), kgo.OnPartitionsRevoked(track(m, false)), kgo.OnPartitionsLost(track(m, false)))
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, cl)
		wg.Add(1)
		go func() { defer wg.Done(); consume(cl, stop) }()
	}
	select {
	case <-all:
	case <-time.After(15 * time.Second):
	}
	close(stop)
	wg.Wait()
	mu.Lock()
	if len(seen) != total {
		t.Fatalf("consumed %d distinct records of %d", len(seen), total)
	}
	for v, c := range seen {
		if c != 1 {
			t.Errorf("record %s consumed %d times", v, c)
		}
	}
	mu.Unlock()

	// A cooperative rebalance may still be finishing: wait for its end.
	select {
	case <-balanced:
	case <-time.After(10 * time.Second):
		mu.Lock()
		t.Errorf("the members never split the partitions between them: %v", owned)
		mu.Unlock()
	}
	described, err := adm.DescribeGroups(ctx, "g1")
	if err != nil {
		t.Fatal(err)
	}
	if g := described["g1"]; g.State != "Stable" || len(g.Members) != 2 {
		t.Errorf("group g1: state %s with %d members, want Stable with 2", g.State, len(g.Members))
	}
	for _, cl := range clients {
		cl.Close() // leaves the group
	}
	offsets, err := adm.FetchOffsets(ctx, "g1")
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	offsets.Each(func(o kadm.OffsetResponse) { sum += o.At })
	if sum != total {
		t.Fatalf("committed offsets add up to %d, want %d", sum, total)
	}

	n.Close()
	n = groupNode(t, dir)
	adm, _ = n.Admin(t)
	// While the coordinator reads __consumer_offsets it answers
	// COORDINATOR_LOAD_IN_PROGRESS, which the client retries itself.
	after, err := adm.FetchOffsets(ctx, "g1")
	if err != nil {
		t.Fatal(err)
	}
	sum = 0
	after.Each(func(o kadm.OffsetResponse) { sum += o.At })
	if sum != total {
		t.Fatalf("after restart the committed offsets add up to %d, want %d", sum, total)
	}
	listed, err := adm.ListGroups(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if l, ok := listed["g1"]; !ok || l.State != "Empty" {
		t.Errorf("ListGroups after restart: %+v, want g1 Empty", listed)
	}
}

// FindCoordinator for a transactional id names this broker (the first
// such request makes __transaction_state, internal and compacted);
// __consumer_offsets is an internal, compacted topic. (Every version of
// FindCoordinator: TestFindCoordinatorVersions; with transactions off:
// e2e/datapath TestTransactionsOff.)
func TestFindCoordinatorAndOffsetsTopic(t *testing.T) {
	n := groupNode(t, t.TempDir())
	adm, cl := n.Admin(t)
	ctx := ctxT(t)
	if _, err := adm.FetchOffsets(ctx, "g1"); err != nil { // makes __consumer_offsets
		t.Fatal(err)
	}
	txn := kmsg.NewPtrFindCoordinatorRequest()
	txn.Version, txn.CoordinatorType, txn.CoordinatorKeys = 4, 1, []string{"tx", "tx2"}
	resp, err := txn.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Coordinators) != 2 {
		t.Fatalf("%d transaction coordinators for 2 keys", len(resp.Coordinators))
	}
	// franz-go shards a batched FindCoordinator by key and merges the
	// answers in no fixed order: match them by key.
	answered := map[string]bool{}
	for _, c := range resp.Coordinators {
		answered[c.Key] = true
		if c.ErrorCode != 0 || c.NodeID != 0 || net.JoinHostPort(c.Host, strconv.Itoa(int(c.Port))) != n.Addr {
			t.Errorf("transaction coordinator of %s: %+v, want this broker (0 at %s)", c.Key, c, n.Addr)
		}
	}
	for _, k := range txn.CoordinatorKeys {
		if !answered[k] {
			t.Errorf("no coordinator for %s in %+v", k, resp.Coordinators)
		}
	}
	states, err := adm.ListTopicsWithInternal(ctx, "__transaction_state")
	if err != nil {
		t.Fatal(err)
	}
	if d := states["__transaction_state"]; !d.IsInternal || len(d.Partitions) != 50 {
		t.Errorf("__transaction_state: internal=%v with %d partitions, want internal with 50 (transaction.state.log.num.partitions)", d.IsInternal, len(d.Partitions))
	}
	tcfgs, err := adm.DescribeTopicConfigs(ctx, "__transaction_state")
	if err != nil {
		t.Fatal(err)
	}
	if rc, err := tcfgs.On("__transaction_state", nil); err != nil {
		t.Fatal(err)
	} else {
		for _, c := range rc.Configs {
			if c.Key == "cleanup.policy" && c.MaybeValue() != "compact" {
				t.Errorf("__transaction_state cleanup.policy=%s, want compact", c.MaybeValue())
			}
		}
	}

	topics, err := adm.ListTopicsWithInternal(ctx, "__consumer_offsets")
	if err != nil {
		t.Fatal(err)
	}
	d := topics["__consumer_offsets"]
	if !d.IsInternal || len(d.Partitions) != 4 {
		t.Errorf("__consumer_offsets: internal=%v with %d partitions, want internal with 4", d.IsInternal, len(d.Partitions))
	}
	cfgs, err := adm.DescribeTopicConfigs(ctx, "__consumer_offsets")
	if err != nil {
		t.Fatal(err)
	}
	rc, err := cfgs.On("__consumer_offsets", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"cleanup.policy": "compact", "segment.bytes": "104857600"}
	for _, c := range rc.Configs {
		if w, ok := want[c.Key]; ok {
			if c.MaybeValue() != w {
				t.Errorf("__consumer_offsets %s=%s, want %s", c.Key, c.MaybeValue(), w)
			}
			delete(want, c.Key)
		}
	}
	if len(want) > 0 {
		t.Errorf("configs missing: %v", want)
	}
}

// Listing groups on a broker that never had one answers an empty list
// and does not create __consumer_offsets; the first group request does.
func TestListGroupsBeforeAnyGroup(t *testing.T) {
	n := groupNode(t, t.TempDir())
	adm, _ := n.Admin(t)
	ctx := ctxT(t)
	listed, err := adm.ListGroups(ctx)
	if err != nil || len(listed) != 0 {
		t.Fatalf("ListGroups: %v %v, want none", listed, err)
	}
	topics, err := adm.ListTopicsWithInternal(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if topics.Has("__consumer_offsets") {
		t.Error("ListGroups created __consumer_offsets")
	}
	if _, err := adm.FetchOffsets(ctx, "g"); err != nil {
		t.Fatal(err)
	}
	fresh, _ := n.Admin(t) // kgo answers a repeated all-topics Metadata from its cache
	if topics, err = fresh.ListTopicsWithInternal(ctx); err != nil || !topics.Has("__consumer_offsets") {
		t.Errorf("__consumer_offsets missing after a group request (%v)", err)
	}
}

// kip848Node is a broker whose KIP-848 members heartbeat often and are
// fenced after two seconds of silence.
func kip848Node(t *testing.T, dir string) *testkit.InProcess {
	return testkit.StartInProcess(t, "log.dirs", dir, "offsets.topic.num.partitions", "4",
		"group.consumer.heartbeat.interval.ms", "200", "group.consumer.session.timeout.ms", "2000")
}

// tally counts how often each record value was consumed.
type tally struct {
	mu   sync.Mutex
	seen map[string]int
}

func (c *tally) add(v string) {
	c.mu.Lock()
	c.seen[v]++
	c.mu.Unlock()
}

func (c *tally) distinct() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.seen)
}

// kip848Member is a franz-go consumer on the KIP-848 protocol that
// processes and commits each poll before it lets the group take
// partitions away: nothing is consumed twice, nothing skipped.
func kip848Member(t *testing.T, addr, group, topic string, seen *tally, balancer kgo.GroupBalancer) (stop func()) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.ServerSideBalancer(), kgo.Balancers(balancer), kgo.DisableAutoCommit(), kgo.BlockRebalanceOnPoll(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			fs := cl.PollFetches(ctx)
			fs.EachRecord(func(r *kgo.Record) { seen.add(string(r.Value)) })
			if rs := fs.Records(); len(rs) > 0 {
				if err := cl.CommitRecords(context.Background(), rs...); err != nil {
					t.Errorf("commit: %v", err)
				}
			}
			cl.AllowRebalance()
		}
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			<-done
			cl.Close() // leaves the group (epoch -1)
		})
	}
	t.Cleanup(stop)
	return stop
}

// waitFor polls cond (a remote view) until it holds, for at most 30 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for !cond() {
		select {
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// describe848 is the group as ConsumerGroupDescribe shows it.
func describe848(t *testing.T, adm *kadm.Client, group string) kadm.DescribedConsumerGroup {
	t.Helper()
	ds, err := adm.DescribeConsumerGroups(ctxT(t), group)
	if err != nil {
		t.Fatal(err)
	}
	return ds[group]
}

// stableWith reports whether the group is Stable with n members that
// between them own every partition of topic (which has parts).
func stableWith(d kadm.DescribedConsumerGroup, n int, topic string, parts int) bool {
	return testkit.ConsumerGroupReconciled(d, topic, n, parts)
}

// Franz-go members on the KIP-848 protocol (ServerSideBalancer) join one
// at a time and in a burst, leave, and consume every record exactly once
// with their commits; the group is a "consumer" group in ListGroups v5,
// ConsumerGroupDescribe shows its members and assignments, DescribeGroups
// says it is not a classic group, and its committed offsets are all at
// the end.
func TestKIP848ConsumeWhileMembersComeAndGo(t *testing.T) {
	for _, bal := range []struct {
		name string
		b    kgo.GroupBalancer
	}{{"uniform", kgo.StickyBalancer()}, {"range", kgo.RangeBalancer()}} {
		t.Run(bal.name, func(t *testing.T) {
			n := kip848Node(t, t.TempDir())
			adm, _ := n.Admin(t)
			ctx := ctxT(t)
			const topic, group, parts = "kip848", "g848", 6
			if _, err := adm.CreateTopics(ctx, parts, 1, nil, topic); err != nil {
				t.Fatal(err)
			}
			const total = 600
			produceValues(t, n.Addr, topic, "first-", total/2)
			seen := &tally{seen: map[string]int{}}

			stopA := kip848Member(t, n.Addr, group, topic, seen, bal.b)
			waitFor(t, "the first member to consume", func() bool { return seen.distinct() > 0 })
			stopB := kip848Member(t, n.Addr, group, topic, seen, bal.b)
			kip848Member(t, n.Addr, group, topic, seen, bal.b)
			kip848Member(t, n.Addr, group, topic, seen, bal.b)
			waitFor(t, "four members sharing the topic", func() bool { return stableWith(describe848(t, adm, group), 4, topic, parts) })
			stopB()
			stopA()
			waitFor(t, "two members left", func() bool { return stableWith(describe848(t, adm, group), 2, topic, parts) })
			produceValues(t, n.Addr, topic, "second-", total/2)
			waitFor(t, "every record consumed", func() bool { return seen.distinct() == total })

			d := describe848(t, adm, group)
			if d.AssignorName != bal.name {
				t.Errorf("assignor %q, want %q", d.AssignorName, bal.name)
			}
			for _, m := range d.Members {
				if m.MemberEpoch != d.AssignmentEpoch || !slices.Equal(m.SubscribedTopics, []string{topic}) {
					t.Errorf("member %s: epoch %d (assignment epoch %d), subscribed %v", m.MemberID, m.MemberEpoch, d.AssignmentEpoch, m.SubscribedTopics)
				}
			}
			listed, err := adm.ListGroupsByType(ctx, []string{"consumer"})
			if err != nil {
				t.Fatal(err)
			}
			if l, ok := listed[group]; !ok || l.GroupType != "consumer" || l.State != "Stable" || l.ProtocolType != "consumer" {
				t.Errorf("ListGroups(consumer): %+v", listed)
			}
			if classic, err := adm.ListGroupsByType(ctx, []string{"classic"}); err != nil || len(classic) != 0 {
				t.Errorf("ListGroups(classic): %v %v", classic, err)
			}
			dg, err := adm.DescribeGroups(ctx, group)
			if err != nil {
				t.Fatal(err)
			}
			// Not a classic group: Dead (and GROUP_ID_NOT_FOUND from v6).
			if dg[group].State != "Dead" || len(dg[group].Members) != 0 || dg[group].Err != nil && !errorsIs(dg[group].Err, kerr.GroupIDNotFound) {
				t.Errorf("DescribeGroups of a consumer group: %+v", dg[group])
			}
			waitFor(t, "commits at the end of every partition", func() bool {
				offs, err := adm.FetchOffsets(ctx, group)
				if err != nil {
					return false
				}
				var sum int64
				offs.Each(func(o kadm.OffsetResponse) { sum += o.At })
				return sum == total
			})
			seen.mu.Lock()
			defer seen.mu.Unlock()
			for v, c := range seen.seen {
				if c != 1 {
					t.Errorf("record %s consumed %d times", v, c)
				}
			}
		})
	}
}

func errorsIs(err error, target *kerr.Error) bool {
	ke, ok := err.(*kerr.Error)
	return ok && ke == target
}

// heartbeat848 sends one ConsumerGroupHeartbeat.
func heartbeat848(t *testing.T, cl *kgo.Client, req *kmsg.ConsumerGroupHeartbeatRequest) *kmsg.ConsumerGroupHeartbeatResponse {
	t.Helper()
	resp, err := req.RequestWith(ctxT(t), cl)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// ownedTopics is an assignment as the member reports it owns it.
func ownedTopics(a *kmsg.ConsumerGroupHeartbeatResponseAssignment) []kmsg.ConsumerGroupHeartbeatRequestTopic {
	out := []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	for _, t := range a.Topics {
		out = append(out, kmsg.ConsumerGroupHeartbeatRequestTopic{TopicID: t.TopicID, Partitions: t.Partitions})
	}
	return out
}

func join848(group, member string, topics ...string) *kmsg.ConsumerGroupHeartbeatRequest {
	req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	req.Version = 1
	req.Group, req.MemberID, req.MemberEpoch = group, member, 0
	req.RebalanceTimeoutMillis = 10000
	req.SubscribedTopicNames = topics
	req.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	return req
}

// A member that stops heartbeating (a crashed process) is fenced after
// group.consumer.session.timeout.ms and its partitions go to the others;
// a member whose group survives a broker restart carries on at its epoch;
// bad requests get Kafka's errors.
func TestKIP848FencingRestartAndErrors(t *testing.T) {
	dir := t.TempDir()
	n := kip848Node(t, dir)
	adm, cl := n.Admin(t)
	ctx := ctxT(t)
	const topic, group = "fence", "gf"
	if _, err := adm.CreateTopics(ctx, 4, 1, nil, topic); err != nil {
		t.Fatal(err)
	}

	// A member joins and gets all four partitions.
	a := heartbeat848(t, cl, join848(group, "member-a", topic))
	if a.ErrorCode != 0 || a.MemberEpoch <= 0 || a.Assignment == nil || len(a.Assignment.Topics) != 1 || len(a.Assignment.Topics[0].Partitions) != 4 {
		t.Fatalf("join: %+v", a)
	}

	// The broker restarts: the group comes back from __consumer_offsets.
	n.Restart()
	adm, cl = n.Admin(t)
	d := describe848(t, adm, group)
	if d.Err != nil || len(d.Members) != 1 || d.Members[0].MemberID != "member-a" || d.Members[0].MemberEpoch != a.MemberEpoch || len(d.Members[0].Assignment[topic]) != 4 {
		t.Fatalf("after restart: %+v", d)
	}
	hb := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	hb.Version, hb.Group, hb.MemberID, hb.MemberEpoch = 1, group, "member-a", a.MemberEpoch
	if r := heartbeat848(t, cl, hb); r.ErrorCode != 0 || r.MemberEpoch != a.MemberEpoch {
		t.Fatalf("heartbeat after restart: %+v", r)
	}
	stale := *hb
	stale.MemberEpoch = a.MemberEpoch + 5
	if r := heartbeat848(t, cl, &stale); r.ErrorCode != kerr.FencedMemberEpoch.Code {
		t.Fatalf("epoch from the future: %v", kerr.ErrorForCode(r.ErrorCode))
	}

	// A second member joins; member-a must give up two partitions first,
	// and then it stops heartbeating: it is fenced and member-b gets all.
	b := heartbeat848(t, cl, join848(group, "member-b", topic))
	if b.ErrorCode != 0 {
		t.Fatalf("second join: %v", kerr.ErrorForCode(b.ErrorCode))
	}
	// member-b heartbeats as a live client does (reporting what it owns),
	// member-a no longer does.
	bctx, stopB := context.WithCancel(ctx)
	bdone := make(chan struct{})
	go func() {
		defer close(bdone)
		epoch := b.MemberEpoch
		owned := ownedTopics(b.Assignment)
		for bctx.Err() == nil {
			req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
			req.Version, req.Group, req.MemberID, req.MemberEpoch = 1, group, "member-b", epoch
			req.Topics = owned
			r, err := req.RequestWith(bctx, cl)
			if err != nil || r.ErrorCode != 0 {
				return
			}
			epoch = r.MemberEpoch
			if r.Assignment != nil {
				owned = ownedTopics(r.Assignment)
			}
			select {
			case <-bctx.Done():
			case <-time.After(time.Duration(r.HeartbeatIntervalMillis) * time.Millisecond):
			}
		}
	}()
	waitFor(t, "member-a fenced and member-b owning everything", func() bool {
		d := describe848(t, adm, group)
		return len(d.Members) == 1 && d.Members[0].MemberID == "member-b" && len(d.Members[0].Assignment[topic]) == 4
	})
	stopB()
	<-bdone
	hb.MemberEpoch = a.MemberEpoch
	if r := heartbeat848(t, cl, hb); r.ErrorCode != kerr.UnknownMemberID.Code {
		t.Fatalf("fenced member's heartbeat: %v", kerr.ErrorForCode(r.ErrorCode))
	}

	for _, c := range []struct {
		name string
		mod  func(*kmsg.ConsumerGroupHeartbeatRequest)
		want *kerr.Error
	}{
		{"bad regex", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.SubscribedTopicRegex = kmsg.StringPtr("(") }, kerr.InvalidRegularExpression},
		{"unknown assignor", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.ServerAssignor = kmsg.StringPtr("cooperative") }, kerr.UnsupportedAssignor},
		{"no member id", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.MemberID = "" }, kerr.InvalidRequest},
		{"no subscription", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.SubscribedTopicNames = nil }, kerr.InvalidRequest},
	} {
		req := join848(group, "member-c", topic)
		c.mod(req)
		if r := heartbeat848(t, cl, req); r.ErrorCode != c.want.Code {
			t.Errorf("%s: %v, want %v", c.name, kerr.ErrorForCode(r.ErrorCode), c.want)
		}
	}

	// A classic member cannot join a consumer group with members.
	jg := kmsg.NewPtrJoinGroupRequest()
	jg.Group, jg.ProtocolType, jg.SessionTimeoutMillis, jg.RebalanceTimeoutMillis = group, "consumer", 10000, 10000
	jg.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: []byte{}}}
	if r, err := jg.RequestWith(ctx, cl); err != nil || r.ErrorCode != kerr.InconsistentGroupProtocol.Code {
		t.Fatalf("classic join: %v %v", r, err)
	}
}

// A franz-go member on the KIP-848 protocol subscribed by regex: the
// broker resolves it (SubscribedTopicRegex, RE2) against the topics,
// including one created while the member runs, and leaves non-matching
// and internal topics out.
func TestKIP848RegexSubscription(t *testing.T) {
	n := kip848Node(t, t.TempDir())
	adm, _ := n.Admin(t)
	ctx := ctxT(t)
	if _, err := adm.CreateTopics(ctx, 2, 1, nil, "rx-a", "rx-b", "other"); err != nil {
		t.Fatal(err)
	}
	produceValues(t, n.Addr, "rx-a", "a-", 20)
	produceValues(t, n.Addr, "rx-b", "b-", 20)
	produceValues(t, n.Addr, "other", "o-", 20)
	seen := &tally{seen: map[string]int{}}
	cl, err := kgo.NewClient(kgo.SeedBrokers(n.Addr), kgo.ConsumerGroup("grx"), kgo.ConsumeRegex(), kgo.ConsumeTopics("^rx-.*"),
		kgo.ServerSideBalancer(), kgo.Balancers(kgo.StickyBalancer()), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxWait(200*time.Millisecond), kgo.MetadataMinAge(100*time.Millisecond), kgo.MetadataMaxAge(500*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	go func() {
		for {
			fs := cl.PollFetches(context.Background())
			if fs.IsClientClosed() {
				return
			}
			fs.EachRecord(func(r *kgo.Record) { seen.add(string(r.Value)) })
		}
	}()
	waitFor(t, "rx-a and rx-b consumed", func() bool { return seen.distinct() == 40 })
	if _, err := adm.CreateTopics(ctx, 1, 1, nil, "rx-c"); err != nil {
		t.Fatal(err)
	}
	produceValues(t, n.Addr, "rx-c", "c-", 10)
	waitFor(t, "rx-c, created later, consumed", func() bool { return seen.distinct() == 50 })
	d := describe848(t, adm, "grx")
	if len(d.Members) != 1 || d.Members[0].SubscribedTopicRegex == nil || len(d.Members[0].Assignment) != 3 || d.Members[0].Assignment["other"] != nil {
		t.Fatalf("describe: %+v", d)
	}
	seen.mu.Lock()
	defer seen.mu.Unlock()
	for v := range seen.seen {
		if strings.HasPrefix(v, "o-") {
			t.Fatalf("consumed %s from a topic the regex does not match", v)
		}
	}
}
