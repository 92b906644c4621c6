package group

import (
	"fmt"
	"testing"
	"time"

	"github.com/samsa-io/samsa/wire/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// benchGroup is a Stable group of n members, built without a harness.
func benchGroup(b *testing.B, n int) (*Group, []string) {
	g := NewGroup("g", testConfig())
	now := t0
	var ids []string
	for i := range n {
		req := kmsg.NewPtrJoinGroupRequest()
		req.Version, req.Group = 3, "g"
		req.SessionTimeoutMillis, req.RebalanceTimeoutMillis = 10000, 30000
		req.ProtocolType = "consumer"
		req.Protocols = rangeOn("t1")
		g.JoinGroup(i, req, Client{ID: fmt.Sprint("c", i)}, now)
	}
	// Fire the join timer (the initial delay extends once) until the
	// join phase ends.
	joinKey := TimerKey{Group: "g", Kind: TimerJoin}
	for g.State() == PreparingRebalance {
		now = g.timers[joinKey]
		g.OnTimer(joinKey, now)
	}
	ids = g.Members()
	sync := kmsg.NewPtrSyncGroupRequest()
	sync.Group, sync.MemberID, sync.Generation = "g", g.Leader(), g.Generation()
	fx := g.SyncGroup(0, sync, now)
	for _, a := range fx.Appends {
		g.OnAppended(a.Token, kerr.None, now)
	}
	if g.State() != Stable {
		b.Fatalf("state %v", g.State())
	}
	return g, ids
}

func BenchmarkHeartbeat(b *testing.B) {
	g, ids := benchGroup(b, 100)
	req := kmsg.NewPtrHeartbeatRequest()
	req.Group, req.Generation = "g", g.Generation()
	now := t0.Add(time.Minute)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		req.MemberID = ids[i%len(ids)]
		fx := g.Heartbeat(0, req, now)
		if len(fx.Replies) != 1 {
			b.Fatal("no reply")
		}
	}
}

func BenchmarkOffsetCommit(b *testing.B) {
	g, ids := benchGroup(b, 10)
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Version, req.Group, req.Generation, req.MemberID = 8, "g", g.Generation(), ids[0]
	t := kmsg.NewOffsetCommitRequestTopic()
	t.Topic = "topic"
	for p := range 10 {
		t.Partitions = append(t.Partitions, kmsg.OffsetCommitRequestTopicPartition{Partition: int32(p), Offset: 1, LeaderEpoch: -1})
	}
	req.Topics = []kmsg.OffsetCommitRequestTopic{t}
	now := t0.Add(time.Minute)
	b.ReportAllocs()
	for b.Loop() {
		fx := g.OffsetCommit(0, req, now)
		g.OnAppended(fx.Appends[0].Token, kerr.None, now)
	}
}

func BenchmarkDecodeGroupValue(b *testing.B) {
	v := sampleGroupValue()
	for i := range 50 {
		v.Members = append(v.Members, MemberValue{MemberID: fmt.Sprint("m", i), ClientID: "c", ClientHost: "/h", Subscription: make([]byte, 40), Assignment: make([]byte, 60)})
	}
	raw := GroupValueBytes(v)
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeGroupValue(raw); err != nil {
			b.Fatal(err)
		}
	}
}
