package groups

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/testkit"
)

// fastGroups are the broker flags every test here uses: no initial
// rebalance delay, so a group forms as soon as its members are in.
var fastGroups = []string{"--group.initial.rebalance.delay.ms", "0"}

var shared = testkit.SharedBroker{Config: testkit.BrokerConfig{Args: fastGroups}}

func TestMain(m *testing.M) { os.Exit(shared.RunTests(m)) }

// sharedBroker returns the broker shared by the tests that do not restart
// or kill it.
func sharedBroker(t *testing.T) *testkit.BrokerProcess {
	t.Helper()
	return shared.Get(t)
}

func deadline(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

var seq atomic.Int64

// name makes a topic or group name unique to this run and test.
func name(t testing.TB, kind string) string {
	base := strings.NewReplacer("/", "-", "_", "-").Replace(strings.ToLower(t.Name()))
	return fmt.Sprintf("%s-%s-%d", base, kind, seq.Add(1))
}

// client returns a franz-go client closed when t ends.
func client(t testing.TB, addr string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.RetryTimeout(30 * time.Second)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func admin(t testing.TB, addr string) *kadm.Client {
	return kadm.NewClient(client(t, addr))
}

func createTopic(t testing.TB, addr, topic string, partitions int32) {
	t.Helper()
	resp, err := admin(t, addr).CreateTopic(deadline(t, 30*time.Second), partitions, 1, nil, topic)
	if err != nil || resp.Err != nil {
		t.Fatalf("create %s: %v %v", topic, err, resp.Err)
	}
}

// produce writes values "0".."n-1" round-robin over the topic's partitions.
func produce(t testing.TB, addr, topic string, from, n int) {
	t.Helper()
	cl := client(t, addr, kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	rs := make([]*kgo.Record, 0, n)
	for i := from; i < from+n; i++ {
		rs = append(rs, &kgo.Record{Value: fmt.Appendf(nil, "%d", i)})
	}
	if err := cl.ProduceSync(deadline(t, 30*time.Second), rs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// waitGroup polls DescribeGroups until ok accepts the group or d passes.
func waitGroup(t testing.TB, adm *kadm.Client, group string, d time.Duration, ok func(kadm.DescribedGroup) bool) kadm.DescribedGroup {
	t.Helper()
	var g kadm.DescribedGroup
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		described, err := adm.DescribeGroups(deadline(t, 10*time.Second), group)
		if err != nil {
			continue
		}
		if g = described[group]; ok(g) {
			return g
		}
	}
	t.Fatalf("group %s never got there: state %q, %d members", group, g.State, len(g.Members))
	return g
}

// stableWith accepts a Stable group of n members that together hold
// partitions partitions of topic.
func stableWith(topic string, n, partitions int) func(kadm.DescribedGroup) bool {
	return func(g kadm.DescribedGroup) bool {
		if g.State != "Stable" || len(g.Members) != n {
			return false
		}
		held := 0
		for _, m := range g.Members {
			if ca, ok := m.Assigned.AsConsumer(); ok {
				for _, tp := range ca.Topics {
					if tp.Topic == topic {
						held += len(tp.Partitions)
					}
				}
			}
		}
		return held == partitions
	}
}

// committed sums a group's committed offsets on topic.
func committed(t testing.TB, adm *kadm.Client, group, topic string) int64 {
	t.Helper()
	resp, err := adm.FetchOffsets(deadline(t, 10*time.Second), group)
	if err != nil {
		t.Fatalf("FetchOffsets %s: %v", group, err)
	}
	var sum int64
	resp.Each(func(o kadm.OffsetResponse) {
		if o.Topic == topic && o.Err == nil {
			sum += o.At
		}
	})
	return sum
}

// tally counts how often each value was consumed.
type tally struct {
	mu   sync.Mutex
	seen map[string]int
	note chan struct{}
}

func newTally() *tally { return &tally{seen: map[string]int{}, note: make(chan struct{}, 1)} }

func (c *tally) add(v string) {
	c.mu.Lock()
	c.seen[v]++
	c.mu.Unlock()
	select {
	case c.note <- struct{}{}:
	default:
	}
}

func (c *tally) distinct() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.seen)
}

// waitDistinct waits until n distinct values were consumed.
func (c *tally) waitDistinct(t testing.TB, n int, d time.Duration) {
	t.Helper()
	timer := time.NewTimer(d)
	defer timer.Stop()
	for c.distinct() < n {
		select {
		case <-c.note:
		case <-timer.C:
			t.Fatalf("consumed %d distinct records of %d within %v", c.distinct(), n, d)
		}
	}
}

// check fails t unless values 0..n-1 were each consumed exactly once
// (once=true) or at least once.
func (c *tally) check(t testing.TB, n int, once bool) (dups int) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range n {
		k := fmt.Sprint(i)
		switch got := c.seen[k]; {
		case got == 0:
			t.Errorf("record %s never consumed", k)
		case got > 1 && once:
			t.Errorf("record %s consumed %d times", k, got)
		case got > 1:
			dups += got - 1
		}
	}
	if len(c.seen) != n {
		t.Errorf("consumed %d distinct values, want %d", len(c.seen), n)
	}
	return dups
}

// member runs a franz-go group consumer that feeds tally until stopped;
// it commits what it consumed after each poll (autocommit off, so a
// rebalance never loses or repeats a commit behind the test's back).
type member struct {
	cl   *kgo.Client
	stop chan struct{}
	done chan struct{}
}

func startMember(t testing.TB, addr, group, topic string, c *tally, opts ...kgo.Opt) *member {
	t.Helper()
	base := []kgo.Opt{kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic), kgo.SessionTimeout(6 * time.Second),
		kgo.HeartbeatInterval(500 * time.Millisecond), kgo.DisableAutoCommit(), kgo.BlockRebalanceOnPoll()}
	cl, err := kgo.NewClient(append(append([]kgo.Opt{kgo.SeedBrokers(addr)}, base...), opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	m := &member{cl: cl, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(m.done)
		for {
			select {
			case <-m.stop:
				return
			default:
			}
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			fs := cl.PollFetches(ctx)
			cancel()
			fs.EachRecord(func(r *kgo.Record) { c.add(string(r.Value)) })
			// Commit before allowing a rebalance: with BlockRebalanceOnPoll
			// the partitions cannot move between the poll and this commit.
			cctx, ccancel := context.WithTimeout(context.Background(), 10*time.Second)
			_ = cl.CommitUncommittedOffsets(cctx)
			ccancel()
			cl.AllowRebalance()
		}
	}()
	t.Cleanup(m.close)
	return m
}

// close stops polling and leaves the group (LeaveGroup).
func (m *member) close() {
	select {
	case <-m.stop:
		return
	default:
	}
	close(m.stop)
	<-m.done
	m.cl.Close()
}
