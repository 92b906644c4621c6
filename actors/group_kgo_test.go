package actors_test

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
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
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var rs []*kgo.Record
	for i := range n {
		rs = append(rs, &kgo.Record{Value: fmt.Appendf(nil, "%d", i)})
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
