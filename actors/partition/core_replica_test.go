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
	fx, ok := c.FollowerFetched(2, 10, -1, testNow, *log)
	if !ok || len(fx.Acks) != 0 || c.HighWatermark() != 0 {
		t.Fatalf("one follower in: acks %v, hw %d", acked(fx), c.HighWatermark())
	}
	fx, _ = c.FollowerFetched(3, 5, -1, testNow, *log)
	if !slices.Equal(acked(fx), []string{"all:NONE"}) || c.HighWatermark() != 5 {
		t.Fatalf("both followers past the batch: acks %v, hw %d", acked(fx), c.HighWatermark())
	}
	if _, ok := c.FollowerFetched(9, 10, -1, testNow, *log); ok {
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
	c.FollowerFetched(2, 0, -1, testNow, *log)
	c.FollowerFetched(3, 0, -1, testNow, *log)
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
	c.FollowerFetched(2, log.End, -1, testNow, *log)
	c.FollowerFetched(3, log.End, -1, testNow, *log)
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
	fx, _ := c.FollowerFetched(2, 5, -1, testNow+32_000, *log)
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

// The durable end, not the fetch offset, is a follower's position for the
// high watermark: a follower that fetched past what it has fsynced (it
// holds offsets 0-9, has fsynced 0-4) holds acks=all back at what every
// ISR member has on disk, so a crash of that follower losing its unsynced
// tail, followed by its election, loses nothing acknowledged. A leader
// that took the fetch offset would acknowledge offsets 5-9 here.
func TestHighWatermarkCountsTheDurableEnd(t *testing.T) {
	c, log := leaderCore(t)
	appendOne(t, c, log, -1, "first")
	appendOne(t, c, log, -1, "second")
	fx, _ := c.FollowerFetched(2, 10, 5, testNow, *log)
	fx2, _ := c.FollowerFetched(3, 10, 5, testNow, *log)
	if got := append(acked(fx), acked(fx2)...); !slices.Equal(got, []string{"first:NONE"}) || c.HighWatermark() != 5 {
		t.Fatalf("followers at fetch offset 10, durable 5: acks %v, hw %d; want only the first batch, hw 5", got, c.HighWatermark())
	}
	fx, _ = c.FollowerFetched(2, 10, 10, testNow, *log)
	if len(fx.Acks) != 0 || c.HighWatermark() != 5 {
		t.Fatalf("one follower durable to 10: acks %v, hw %d", acked(fx), c.HighWatermark())
	}
	fx, _ = c.FollowerFetched(3, 10, 10, testNow, *log)
	if !slices.Equal(acked(fx), []string{"second:NONE"}) || c.HighWatermark() != 10 {
		t.Fatalf("both durable to 10: acks %v, hw %d", acked(fx), c.HighWatermark())
	}
	// A durable end past the fetch offset is not believed past it.
	appendOne(t, c, log, 1, "third")
	c.FollowerFetched(2, 12, 15, testNow, *log)
	c.FollowerFetched(3, 15, 15, testNow, *log)
	if c.HighWatermark() != 12 {
		t.Fatalf("a durable end of 15 at fetch offset 12 counted as %d, want 12", c.HighWatermark())
	}
}

// Caught up for replica.lag.time.max.ms is the fetch offset's (a follower
// fetching while its fsync runs keeps up), and a follower out of the ISR
// joins once its durable end, not its fetch offset, reaches the high
// watermark.
func TestDurableEndAndTheISR(t *testing.T) {
	c, log := leaderCore(t)
	appendOne(t, c, log, 1, "x")
	// Leading since testNow; 25 s later follower 2 fetches at the log
	// end with nothing of it fsynced yet.
	c.FollowerFetched(2, log.End, 0, testNow+25_000, *log)
	c.FollowerFetched(3, log.End, log.End, testNow+25_000, *log)
	if fx := c.CheckISR(testNow+40_000, log.End); fx.AlterISR != nil {
		t.Fatalf("a follower at the log end by fetch offset 15 s ago, not yet durable, proposed out: %v", fx.AlterISR.ISR)
	}
	// Its fsync never completes and it fetches no more: out after the lag
	// time, so acks=all does not wait for it forever.
	fx := c.CheckISR(testNow+56_000, log.End)
	if fx.AlterISR == nil || !slices.Equal(fx.AlterISR.ISR, []int32{1, 3}) {
		t.Fatalf("a follower whose durable end stayed behind for the lag time: %+v, want ISR [1 3]", fx.AlterISR)
	}
	c.ISRUpdated(*fx.AlterISR, []int32{1, 3}, 8, ISRChanged, *log)
	if fx, _ := c.FollowerFetched(2, log.End, 0, testNow+57_000, *log); fx.AlterISR != nil {
		t.Fatalf("proposed back into the ISR with nothing durable: %v", fx.AlterISR.ISR)
	}
	fx, _ = c.FollowerFetched(2, log.End, log.End, testNow+57_000, *log)
	if fx.AlterISR == nil || !slices.Equal(fx.AlterISR.ISR, []int32{1, 3, 2}) {
		t.Fatalf("durable to the high watermark: %+v, want ISR [1 3 2]", fx.AlterISR)
	}
}
