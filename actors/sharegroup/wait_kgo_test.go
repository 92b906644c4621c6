package sharegroup_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/testkit"
)

// longPollMax is the max wait of the long polls below: far above any
// wake-up, so an answer with records before it came from the wake-up.
const longPollMax = 20 * time.Second

type fetchAnswer struct {
	resp *kmsg.ShareFetchResponse
	err  error
	took time.Duration
}

// longPoll sends c's ShareFetch with longPollMax in the background and
// returns once it waits on the partition (its view counts one more
// parked fetch than before) or answered.
func longPoll(t *testing.T, n *testkit.InProcess, c *shareClient, topic string) <-chan fetchAnswer {
	t.Helper()
	view := n.Broker.Routes().Topics[topic].View(0)
	before := view.Parked()
	req := c.fetchRequest(longPollMax, 100)
	out := make(chan fetchAnswer, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*longPollMax)
		defer cancel()
		began := time.Now()
		resp, err := req.RequestWith(ctx, c.cl)
		out <- fetchAnswer{resp, err, time.Since(began)}
	}()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for deadline := time.Now().Add(longPollMax); view.Parked() <= before; {
		if time.Now().After(deadline) {
			t.Fatal("the ShareFetch never waited on the partition")
		}
		select {
		case a := <-out:
			// Answered before it waited: what it would wait for (a lock
			// running out) came first on a slow machine.
			again := make(chan fetchAnswer, 1)
			again <- a
			return again
		case <-tick.C:
		}
	}
	return out
}

// answered is what a long poll acquired, failing t unless it answered
// before its max wait.
func answered(t *testing.T, c *shareClient, ch <-chan fetchAnswer) delivered {
	t.Helper()
	a := <-ch
	got := c.acquired(a.resp, a.err)
	if a.took >= longPollMax {
		t.Fatalf("the ShareFetch answered after %v, its max wait", a.took)
	}
	return got
}

// TestShareFetchWakesOnProduce: a ShareFetch with nothing to acquire
// waits on its partition like a Fetch, and a produce wakes it: it
// answers with the new records before its max wait.
func TestShareFetchWakesOnProduce(t *testing.T) {
	n := startWithTopic(t, "sw")
	m := join(t, n, "gw", "m1", "sw")
	ch := longPoll(t, n, m, "sw")
	produce(t, n, "sw", 0, 3)
	if got := answered(t, m, ch); !slices.Equal(got.offsets, []int64{0, 1, 2}) {
		t.Fatalf("the woken ShareFetch got %v, want 0-2", got.offsets)
	}
}

// twoMembersOneHolding starts a broker configured by kv with topic, two
// members a and b of group, and two records that a holds.
func twoMembersOneHolding(t *testing.T, topic, group string, kv ...string) (n *testkit.InProcess, a, b *shareClient) {
	t.Helper()
	n = startWithTopic(t, topic, kv...)
	a = join(t, n, group, "a", topic)
	b = join(t, n, group, "b", topic)
	b.fetch(0, 100) // starts the share partition at the latest offset, 0
	produce(t, n, topic, 0, 2)
	if got := a.fetch(5*time.Second, 100); !slices.Equal(got.offsets, []int64{0, 1}) {
		t.Fatalf("a got %v, want 0-1", got.offsets)
	}
	return n, a, b
}

// TestShareFetchWakesOnRelease: a member waiting while another holds
// every record gets them when the other releases them, long before the
// locks (30 s by default) would run out.
func TestShareFetchWakesOnRelease(t *testing.T) {
	n, a, b := twoMembersOneHolding(t, "sr", "gr")
	ch := longPoll(t, n, b, "sr")
	a.acknowledge(ack{0, 1, 2})
	if got := answered(t, b, ch); !slices.Equal(got.offsets, []int64{0, 1}) || got.deliveries[0] != 2 {
		t.Fatalf("after a's release b got %v (deliveries %v), want 0-1 delivered twice", got.offsets, got.deliveries)
	}
}

// TestShareFetchWaitingAcrossSessionClose: a member closes its share
// session (ShareAcknowledge at the final epoch) while its own ShareFetch
// waits. The close releases its records and wakes the fetch, which must
// not take them again for a consumer that is gone: it answers empty, and
// another member gets them.
func TestShareFetchWaitingAcrossSessionClose(t *testing.T) {
	n, a, b := twoMembersOneHolding(t, "sx", "gx")
	ch := longPoll(t, n, a, "sx")
	closeSession := kmsg.NewPtrShareAcknowledgeRequest()
	closeSession.Version = 1
	closeSession.GroupID, closeSession.MemberID, closeSession.ShareSessionEpoch = &a.group, &a.member, -1
	if resp, err := closeSession.RequestWith(ctxT(t), a.cl); err != nil || resp.ErrorCode != 0 {
		t.Fatalf("closing a's share session: %v %+v", err, resp)
	}
	if got := answered(t, a, ch); len(got.offsets) != 0 {
		t.Fatalf("a's waiting fetch acquired %v after its session closed", got.offsets)
	}
	if got := b.fetch(5*time.Second, 100); !slices.Equal(got.offsets, []int64{0, 1}) || got.deliveries[0] != 2 {
		t.Fatalf("b got %v (deliveries %v), want 0-1 released by a's close", got.offsets, got.deliveries)
	}
}

// TestShareFetchWakesOnLockExpiry: a member waiting while another holds
// every record and acknowledges nothing gets them when the locks (1 s
// here) run out, long before its own max wait.
func TestShareFetchWakesOnLockExpiry(t *testing.T) {
	n, _, b := twoMembersOneHolding(t, "se", "ge", "group.share.record.lock.duration.ms", "1000", "group.share.min.record.lock.duration.ms", "1000")
	ch := longPoll(t, n, b, "se")
	if got := answered(t, b, ch); !slices.Equal(got.offsets, []int64{0, 1}) || got.deliveries[0] != 2 {
		t.Fatalf("after a's locks ran out b got %v (deliveries %v), want 0-1 delivered twice", got.offsets, got.deliveries)
	}
}
