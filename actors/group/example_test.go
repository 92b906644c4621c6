package group_test

import (
	"fmt"
	"time"

	"github.com/samsa-io/samsa/actors/group"
	"github.com/samsa-io/samsa/wire/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// shell is the smallest possible driver: what an actor's Receive does with
// the Effects of each call, with a fake log and a fake clock.
type shell struct {
	c      *group.Coordinator
	now    time.Time
	timers map[group.TimerKey]time.Time
}

func (s *shell) do(fx group.Effects) {
	for _, r := range fx.Replies {
		fmt.Printf("reply to %v: %s\n", r.To, describe(r.Response))
	}
	for _, k := range fx.Cancel {
		delete(s.timers, k)
	}
	for _, t := range fx.Timers {
		s.timers[t.Key] = t.At
	}
	for _, a := range fx.Appends {
		fmt.Printf("append %d record(s) to __consumer_offsets-%d\n", len(a.Records), group.PartitionFor(a.Group, 50))
		s.do(s.c.OnAppended(a, kerr.None, s.now)) // the append is durable
	}
}

// tick fires the timers due by now (a real shell arms time.AfterFunc and
// posts a message to the actor instead).
func (s *shell) tick(now time.Time) {
	s.now = now
	for k, at := range s.timers {
		if !at.After(now) {
			delete(s.timers, k)
			s.do(s.c.OnTimer(k, now))
		}
	}
}

func describe(r kmsg.Response) string {
	switch r := r.(type) {
	case *kmsg.JoinGroupResponse:
		return fmt.Sprintf("JoinGroup %v generation %d leader=%v", kerr.Code(r.ErrorCode).String(), r.Generation, r.LeaderID == r.MemberID)
	case *kmsg.SyncGroupResponse:
		return fmt.Sprintf("SyncGroup %v assignment %q", kerr.Code(r.ErrorCode).String(), r.MemberAssignment)
	case *kmsg.OffsetCommitResponse:
		return fmt.Sprintf("OffsetCommit %v", kerr.Code(r.Topics[0].Partitions[0].ErrorCode).String())
	}
	return fmt.Sprintf("%T", r)
}

func Example() {
	n := uint64(0)
	cfg := group.Config{NewUUID: func() (u [16]byte) { n++; u[15] = byte(n); return u }}
	s := &shell{c: group.NewCoordinator(cfg), now: time.Unix(0, 0), timers: map[group.TimerKey]time.Time{}}

	join := kmsg.NewPtrJoinGroupRequest()
	join.Version, join.Group = 3, "orders"
	join.SessionTimeoutMillis, join.RebalanceTimeoutMillis = 10000, 30000
	join.ProtocolType = "consumer"
	join.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: []byte{}}}
	s.do(s.c.Handle("req-1", join, group.Client{ID: "app", Host: "/127.0.0.1"}, s.now))
	fmt.Println("parked; the initial rebalance delay runs")
	s.tick(s.now.Add(3 * time.Second))

	member := s.c.Group("orders").Leader()
	sync := kmsg.NewPtrSyncGroupRequest()
	sync.Group, sync.MemberID, sync.Generation = "orders", member, 1
	sync.GroupAssignment = []kmsg.SyncGroupRequestGroupAssignment{{MemberID: member, MemberAssignment: []byte("p0")}}
	s.do(s.c.Handle("req-2", sync, group.Client{}, s.now))

	commit := kmsg.NewPtrOffsetCommitRequest()
	commit.Version, commit.Group, commit.MemberID, commit.Generation = 8, "orders", member, 1
	commit.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "t", Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: 42}}}}
	s.do(s.c.Handle("req-3", commit, group.Client{}, s.now))
	// Output:
	// parked; the initial rebalance delay runs
	// reply to req-1: JoinGroup NONE generation 1 leader=true
	// append 1 record(s) to __consumer_offsets-31
	// reply to req-2: SyncGroup NONE assignment "p0"
	// append 1 record(s) to __consumer_offsets-31
	// reply to req-3: OffsetCommit NONE
}
