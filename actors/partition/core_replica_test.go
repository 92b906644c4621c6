package partition

import (
	"slices"
	"testing"

	"github.com/samsa-io/samsa/segment"
	"github.com/samsa-io/samsa/wire/batchtest"
	"github.com/samsa-io/samsa/wire/kerr"
)

// leaderCore is a core leading a partition of replicas 1 (this one), 2
// and 3, all in the ISR, under the never policy (what is appended is
// what counts here), with min.insync.replicas=2.
func leaderCore(t *testing.T) (*Core, *LogState) {
	t.Helper()
	rules := RulesOf(topicConfig(t, "min.insync.replicas", "2"))
	log := &LogState{Policy: segment.FlushNever, SegmentBytes: 1 << 30}
	c, _ := NewCore(rules, nil, -1, 0, testNow, *log)
	c.Lead(Leadership{Me: 1, LeaderEpoch: 3, PartitionEpoch: 7, Replicas: []int32{1, 2, 3}, ISR: []int32{1, 2, 3}, LagMaxMs: 30_000}, 0, testNow, *log)
	return c, log
}

// appendOne produces and appends one 5-record batch with acks, returning
// the effects of the append.
func appendOne(t *testing.T, c *Core, log *LogState, acks int16, ticket string) Effects {
	t.Helper()
	a, fx := c.Produce(Produce{Records: batchtest.Plain(5, testNow), Version: 9, Acks: acks, Ticket: ticket}, testNow, *log)
	if a == nil {
		t.Fatalf("produce refused: %+v", fx.Acks)
	}
	first := log.End
	log.End += 5
	return c.Appended(a, segment.AppendResult{FirstOffset: first, LastOffset: log.End - 1, LogAppendTime: -1, LogEndOffset: log.End}, nil, testNow, *log)
}

func acked(fx Effects) []string {
	var out []string
	for _, a := range fx.Acks {
		out = append(out, a.Ticket.(string)+":"+a.Code.String())
	}
	return out
}

// acks=all waits for every ISR member's position; acks=1 answers on the
// leader's own; the high watermark is the least ISR position.
func TestLeaderWaitsForTheISR(t *testing.T) {
	c, log := leaderCore(t)
	if fx := appendOne(t, c, log, -1, "all"); len(fx.Acks) != 0 {
		t.Fatalf("acks=all answered before any follower fetched: %v", acked(fx))
	}
	if fx := appendOne(t, c, log, 1, "one"); !slices.Equal(acked(fx), []string{"one:NONE"}) {
		t.Fatalf("acks=1: %v", acked(fx))
	}
	fx, ok := c.FollowerFetched(2, 10, testNow, *log)
	if !ok || len(fx.Acks) != 0 || c.HighWatermark() != 0 {
		t.Fatalf("one follower in: acks %v, hw %d", acked(fx), c.HighWatermark())
	}
	fx, _ = c.FollowerFetched(3, 5, testNow, *log)
	if !slices.Equal(acked(fx), []string{"all:NONE"}) || c.HighWatermark() != 5 {
		t.Fatalf("both followers past the batch: acks %v, hw %d", acked(fx), c.HighWatermark())
	}
	if _, ok := c.FollowerFetched(9, 10, testNow, *log); ok {
		t.Fatal("a fetch from a broker that is no replica was taken")
	}
}

// A follower that does not catch up within replica.lag.time.max.ms is
// proposed out of the ISR; with the ISR below min.insync.replicas,
// acks=all is refused, and one appended before is answered
// NOT_ENOUGH_REPLICAS_AFTER_APPEND.
func TestLaggingFollowersLeaveTheISR(t *testing.T) {
	c, log := leaderCore(t)
	appendOne(t, c, log, -1, "early")
	c.FollowerFetched(2, 0, testNow, *log)
	c.FollowerFetched(3, 0, testNow, *log)
	if fx := c.CheckISR(testNow+10_000, log.End); fx.AlterISR != nil {
		t.Fatalf("proposed %v before the lag time", fx.AlterISR.ISR)
	}
	fx := c.CheckISR(testNow+31_000, log.End)
	if fx.AlterISR == nil || !slices.Equal(fx.AlterISR.ISR, []int32{1}) || fx.AlterISR.PartitionEpoch != 7 || fx.AlterISR.LeaderEpoch != 3 {
		t.Fatalf("proposal %+v, want ISR [1] at epochs 3/7", fx.AlterISR)
	}
	fx = c.ISRUpdated(*fx.AlterISR, []int32{1}, 8, ISRChanged, *log)
	if !slices.Equal(acked(fx), []string{"early:NOT_ENOUGH_REPLICAS_AFTER_APPEND"}) {
		t.Fatalf("waiting acks=all after the shrink: %v", acked(fx))
	}
	a, fx := c.Produce(Produce{Records: batchtest.Plain(1, testNow), Version: 9, Acks: -1, Ticket: "late"}, testNow, *log)
	if a != nil || len(fx.Acks) != 1 || fx.Acks[0].Code != kerr.NotEnoughReplicas {
		t.Fatalf("acks=all with the ISR at 1: %+v", fx.Acks)
	}
}

// A follower that has the whole log stays in the ISR however long it
// has not fetched (Kafka's isCaughtUp), until records arrive that it
// does not fetch.
func TestIdleCaughtUpFollowersStay(t *testing.T) {
	c, log := leaderCore(t)
	appendOne(t, c, log, -1, "x")
	c.FollowerFetched(2, log.End, testNow, *log)
	c.FollowerFetched(3, log.End, testNow, *log)
	if fx := c.CheckISR(testNow+10*60_000, log.End); fx.AlterISR != nil {
		t.Fatalf("caught-up idle followers proposed out: %v", fx.AlterISR.ISR)
	}
	appendOne(t, c, log, 1, "y")
	fx := c.CheckISR(testNow+10*60_000, log.End)
	if fx.AlterISR == nil || !slices.Equal(fx.AlterISR.ISR, []int32{1}) {
		t.Fatalf("after new records they never fetched: %+v, want ISR [1]", fx.AlterISR)
	}
}

// A follower that reaches the high watermark is proposed back into the
// ISR; an answer to a proposal of an older partition epoch is ignored.
func TestCaughtUpFollowersRejoin(t *testing.T) {
	c, log := leaderCore(t)
	shrink := c.CheckISR(testNow+31_000, log.End).AlterISR
	c.ISRUpdated(*shrink, []int32{1}, 8, ISRChanged, *log)
	appendOne(t, c, log, 1, "x")
	fx, _ := c.FollowerFetched(2, 5, testNow+32_000, *log)
	if fx.AlterISR == nil || !slices.Equal(fx.AlterISR.ISR, []int32{1, 2}) || fx.AlterISR.PartitionEpoch != 8 {
		t.Fatalf("caught-up follower not proposed back: %+v", fx.AlterISR)
	}
	c.ISRUpdated(*shrink, []int32{1, 2, 3}, 99, ISRChanged, *log) // stale: epoch 7
	if got := c.ISR(); !slices.Equal(got, []int32{1}) {
		t.Fatalf("a stale answer changed the ISR to %v", got)
	}
	c.ISRUpdated(*fx.AlterISR, []int32{1, 2}, 9, ISRChanged, *log)
	if got := c.ISR(); !slices.Equal(got, []int32{1, 2}) {
		t.Fatalf("ISR %v after the rejoin", got)
	}
}

// Losing leadership fails the waiting acks=all answers over (the
// producer retries on the new leader); a follower's high watermark is
// its leader's, never past its own end.
func TestFollowingFailsWaitingAcks(t *testing.T) {
	c, log := leaderCore(t)
	appendOne(t, c, log, -1, "w")
	fx := c.Follow()
	if !slices.Equal(acked(fx), []string{"w:NOT_LEADER_OR_FOLLOWER"}) || c.Leading() {
		t.Fatalf("follow: %v", acked(fx))
	}
	c.FollowerHighWatermark(100, *log)
	if c.HighWatermark() != log.End {
		t.Fatalf("follower hw %d past its end %d", c.HighWatermark(), log.End)
	}
}
