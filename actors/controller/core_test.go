package controller

import (
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/wire/kerr"
)

// Focused tests of Kafka's rules, one each; the simulation covers their
// interplay.

func brokerSet(ids ...int32) map[int32]BrokerInfo {
	m := map[int32]BrokerInfo{}
	for _, id := range ids {
		m[id] = BrokerInfo{ID: id, Epoch: int64(100 + id), Endpoints: []Endpoint{{"PLAINTEXT", "h", 9092, "PLAINTEXT"}}}
	}
	return m
}

func oneTopic(replicas ...int32) []TopicAssignment {
	return []TopicAssignment{{Name: "t", ID: TopicID{9}, Partitions: map[int32][]int32{0: replicas}}}
}

var tp0 = TopicPartition{"t", 0}

func state(leader, epoch, version int32, isr ...int32) PartitionState {
	return PartitionState{Leader: leader, LeaderEpoch: epoch, ControllerEpoch: 1, ISR: isr, Version: version}
}

func started(t *testing.T, cfg Config, brokers map[int32]BrokerInfo, s PartitionState, replicas ...int32) *Core {
	t.Helper()
	cfg.Epoch, cfg.BrokerID = 2, 1
	c := New(cfg)
	c.Start(brokers, oneTopic(replicas...), map[TopicPartition]PartitionState{tp0: s}, nil)
	return c
}

func TestNewPartitionLeaderIsFirstLiveReplica(t *testing.T) {
	c := New(Config{BrokerID: 1, Epoch: 1})
	fx := c.Start(brokerSet(2, 3), oneTopic(1, 3, 2), nil, nil)
	if len(fx.Writes) != 1 || !fx.Writes[0].Create {
		t.Fatalf("writes %+v", fx.Writes)
	}
	s := fx.Writes[0].State
	if s.Leader != 3 || !slices.Equal(s.ISR, []int32{3, 2}) || s.LeaderEpoch != 0 || s.ControllerEpoch != 1 {
		t.Fatalf("first state %+v", s)
	}
	for _, snd := range fx.Send {
		if lai, ok := snd.Req.(*kmsg.LeaderAndISRRequest); ok {
			if lai.Version != 7 || !lai.TopicStates[0].PartitionStates[0].IsNew || lai.TopicStates[0].TopicID != (TopicID{9}) || lai.BrokerEpoch != 100+int64(snd.Broker) {
				t.Fatalf("LeaderAndIsr %+v", lai)
			}
		}
	}
}

func TestLeaderDiesElectsFromISRInAssignmentOrder(t *testing.T) {
	c := started(t, Config{}, brokerSet(1, 2, 3), state(1, 4, 7, 1, 3, 2), 1, 2, 3)
	fx := c.BrokersChanged(brokerSet(2, 3))
	if len(fx.Writes) != 1 {
		t.Fatalf("writes %+v", fx.Writes)
	}
	s := fx.Writes[0].State
	if s.Leader != 2 || s.LeaderEpoch != 5 || !slices.Equal(s.ISR, []int32{3, 2}) || s.Version != 7 || s.ControllerEpoch != 2 {
		t.Fatalf("election wrote %+v", s)
	}
}

func TestLastISRMemberDiesLeavesNoLeaderAndKeepsISR(t *testing.T) {
	c := started(t, Config{}, brokerSet(1, 2), state(1, 4, 7, 1), 1, 2)
	fx := c.BrokersChanged(brokerSet(2))
	if len(fx.Writes) != 1 {
		t.Fatalf("writes %+v", fx.Writes)
	}
	if s := fx.Writes[0].State; s.Leader != NoLeader || !slices.Equal(s.ISR, []int32{1}) || s.LeaderEpoch != 5 {
		t.Fatalf("wrote %+v, want leader -1, ISR [1], epoch 5", s)
	}
}

func TestUncleanElectionPicksLiveReplicaAndRecovers(t *testing.T) {
	c := started(t, Config{UncleanLeaderElection: true}, brokerSet(1, 2), state(1, 4, 7, 1), 1, 2)
	fx := c.BrokersChanged(brokerSet(2))
	if s := fx.Writes[0].State; s.Leader != 2 || !slices.Equal(s.ISR, []int32{2}) || s.LeaderRecoveryState != Recovering || s.LeaderEpoch != 5 {
		t.Fatalf("unclean election wrote %+v", s)
	}
}

func TestFollowerDiesShrinksISRWithNewEpoch(t *testing.T) {
	c := started(t, Config{}, brokerSet(1, 2), state(1, 4, 7, 1, 2), 1, 2)
	fx := c.BrokersChanged(brokerSet(1))
	if s := fx.Writes[0].State; s.Leader != 1 || !slices.Equal(s.ISR, []int32{1}) || s.LeaderEpoch != 5 {
		t.Fatalf("shrink wrote %+v", s)
	}
}

func TestRestartedBrokerGetsFullLeaderAndISR(t *testing.T) {
	c := started(t, Config{}, brokerSet(1, 2), state(1, 4, 7, 1, 2), 1, 2)
	bs := brokerSet(1, 2)
	b := bs[2]
	b.Epoch = 500
	bs[2] = b
	fx := c.BrokersChanged(bs)
	var gotLAI, gotFullUM bool
	for _, snd := range fx.Send {
		switch r := snd.Req.(type) {
		case *kmsg.LeaderAndISRRequest:
			if snd.Broker == 2 && r.BrokerEpoch == 500 {
				gotLAI = true
			}
		case *kmsg.UpdateMetadataRequest:
			if snd.Broker == 2 && len(r.TopicStates) == 1 && r.BrokerEpoch == 500 {
				gotFullUM = true
			}
		}
	}
	if !gotLAI || !gotFullUM {
		t.Fatalf("restarted broker got LeaderAndIsr %v, full UpdateMetadata %v: %+v", gotLAI, gotFullUM, fx.Send)
	}
}

func alterReq(leader int32, epoch, version int32, isr ...int32) *kmsg.AlterPartitionRequest {
	req := kmsg.NewPtrAlterPartitionRequest()
	req.Version, req.BrokerID, req.BrokerEpoch = 2, leader, 100+int64(leader)
	rt := kmsg.NewAlterPartitionRequestTopic()
	rt.TopicID = TopicID{9}
	rp := kmsg.NewAlterPartitionRequestTopicPartition()
	rp.LeaderEpoch, rp.PartitionEpoch, rp.NewISR = epoch, version, isr
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

func TestAlterPartitionErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		req  *kmsg.AlterPartitionRequest
		want kerr.Code
	}{
		{"accepted", alterReq(1, 4, 7, 1), kerr.None},
		{"newer leader epoch", alterReq(1, 5, 7, 1), kerr.NotController},
		{"newer partition epoch", alterReq(1, 4, 8, 1), kerr.NotController},
		{"fenced", alterReq(1, 3, 7, 1), kerr.FencedLeaderEpoch},
		{"stale version", alterReq(1, 4, 6, 1), kerr.InvalidUpdateVersion},
		{"already so at a stale version", alterReq(1, 4, 6, 1, 2), kerr.None},
		{"ineligible", alterReq(1, 4, 7, 1, 2, 3), kerr.IneligibleReplica},
		{"not the leader", alterReq(2, 4, 7, 2), kerr.NotLeaderOrFollower},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := started(t, Config{}, brokerSet(1, 2), state(1, 4, 7, 1, 2), 1, 2, 3)
			fx := c.AlterPartition(tc.req)
			resp := fx.Reply.(*kmsg.AlterPartitionResponse)
			if got := kerr.Code(resp.Topics[0].Partitions[0].ErrorCode); got != tc.want {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			if (tc.want == kerr.None && tc.name == "accepted") != (len(fx.Writes) == 1) {
				t.Fatalf("writes %+v", fx.Writes)
			}
		})
	}
	c := started(t, Config{}, brokerSet(1, 2), state(1, 4, 7, 1, 2), 1, 2)
	req := alterReq(1, 4, 7, 1)
	req.BrokerEpoch = 1
	if resp := c.AlterPartition(req).Reply.(*kmsg.AlterPartitionResponse); resp.ErrorCode != int16(kerr.StaleBrokerEpoch) {
		t.Fatalf("stale broker epoch answered %+v", resp)
	}
	fx := c.AlterPartition(alterReq(1, 4, 7, 1))
	if resp := c.WriteFailed(WriteConflict).Reply.(*kmsg.AlterPartitionResponse); resp.Topics[0].Partitions[0].ErrorCode != int16(kerr.InvalidUpdateVersion) || len(fx.Writes) != 1 {
		t.Fatalf("a failed write answered %+v", resp)
	}
}

func TestControlledShutdownMovesLeadership(t *testing.T) {
	c := started(t, Config{}, brokerSet(1, 2), state(1, 4, 7, 1, 2), 1, 2)
	req := kmsg.NewPtrControlledShutdownRequest()
	req.Version, req.BrokerID, req.BrokerEpoch = 3, 1, 101
	fx := c.ControlledShutdown(req)
	resp := fx.Reply.(*kmsg.ControlledShutdownResponse)
	if resp.ErrorCode != 0 || len(resp.PartitionsRemaining) != 0 {
		t.Fatalf("answered %+v", resp)
	}
	if s := fx.Writes[0].State; s.Leader != 2 || !slices.Equal(s.ISR, []int32{2}) || s.LeaderEpoch != 5 {
		t.Fatalf("wrote %+v", s)
	}
	req.BrokerEpoch = 50
	if r := c.ControlledShutdown(req).Reply.(*kmsg.ControlledShutdownResponse); r.ErrorCode != int16(kerr.StaleBrokerEpoch) {
		t.Fatalf("stale epoch answered %+v", r)
	}
}

func TestDeletionDisabledRemovesMarker(t *testing.T) {
	c := started(t, Config{}, brokerSet(1, 2), state(1, 4, 7, 1, 2), 1, 2)
	fx := c.DeletionRequested([]string{"t", "gone"})
	if !slices.Equal(fx.RemoveMarkers, []string{"gone", "t"}) || len(fx.DeleteTopics) != 0 || len(fx.Send) != 0 {
		t.Fatalf("effects %+v", fx)
	}
}

func TestDeletionWaitsForOfflineReplica(t *testing.T) {
	c := started(t, Config{DeleteTopicEnable: true}, brokerSet(1, 2), state(1, 4, 7, 1, 2), 1, 2, 3)
	fx := c.DeletionRequested([]string{"t"})
	for _, snd := range fx.Send {
		if sr, ok := snd.Req.(*kmsg.StopReplicaRequest); ok && sr.Topics[0].PartitionStates[0].Delete {
			resp := sr.ResponseKind().(*kmsg.StopReplicaResponse)
			pr := kmsg.NewStopReplicaResponsePartition()
			pr.Topic, pr.Partition = "t", 0
			resp.Partitions = append(resp.Partitions, pr)
			if got := c.StopReplicaAnswered(snd.Broker, sr, resp); len(got.DeleteTopics) != 0 {
				t.Fatalf("deleted while replica 3 is offline")
			}
		}
	}
	fx = c.BrokersChanged(brokerSet(1, 2, 3))
	var sr *kmsg.StopReplicaRequest
	for _, snd := range fx.Send {
		if r, ok := snd.Req.(*kmsg.StopReplicaRequest); ok && snd.Broker == 3 && r.Topics[0].PartitionStates[0].Delete {
			sr = r
		}
	}
	if sr == nil {
		t.Fatalf("broker 3 was not told to delete: %+v", fx.Send)
	}
	resp := sr.ResponseKind().(*kmsg.StopReplicaResponse)
	pr := kmsg.NewStopReplicaResponsePartition()
	pr.Topic, pr.Partition = "t", 0
	resp.Partitions = append(resp.Partitions, pr)
	if got := c.StopReplicaAnswered(3, sr, resp); !slices.Equal(got.DeleteTopics, []string{"t"}) {
		t.Fatalf("deletion did not complete: %+v", got)
	}
}
